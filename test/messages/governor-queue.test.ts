// The send governor end to end (real daemon, sandbox engine, HTTP): sends past the pace wait in the session's queue
// (202 with their place under Prefer: respond-async, a held request without), the queue is listed and an entry
// cancelled; a first message past the day's cap is 429 SEND_CAP_REACHED with Retry-After and the cap's name; the master
// key alone exempts a key or a session, and the audit log records it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
const ASYNC = { Prefer: 'respond-async' };
const send = (session: string, chatId: string, text: string, headers: Record<string, string> = {}, key?: string) =>
  daemon.request('POST', `/api/sessions/${session}/messages/send`, { chatId, type: 'text', text }, key, headers);
const write = (session: string, from: string) => daemon.request('POST', `/api/sandbox/sessions/${session}/inbound`, { from, type: 'text', text: 'hello' });

before(async () => {
  daemon = await startDaemon({
    env: { GATEWAY_GOVERNOR_ENABLED: 'true' },
    // a slow pace (a send every 3 s once the one-send burst is spent), no jitter, and a small daily first-contact cap
    config: 'governor:\n  perMinute: 20\n  burst: 1\n  jitterPercent: 0\n  recipientGapSeconds: 0\n  firstContactsPerDay: 2\n  warmup: []\n',
  });
  await pairedSession(daemon, 'paced', '+15550310001');
  await pairedSession(daemon, 'capped', '+15550310002');
});

after(() => daemon?.cleanup());

describe('the queue', () => {
  test('sends past the pace are queued (202, their place), listed, cancellable, and go out in order', async () => {
    const friends = ['+15550311001', '+15550311002', '+15550311003', '+15550311004'];
    for (const friend of friends) assert.equal((await write('paced', friend)).status, 200);
    const first = await send('paced', friends[0]!, 'now');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const queued = [];
    for (const [i, friend] of friends.slice(1).entries()) {
      const res = await send('paced', friend, `later ${i}`, ASYNC);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.headers.get('preference-applied'), 'respond-async');
      assert.deepEqual([res.body.data.status, res.body.data.position], ['queued', i + 1]);
      queued.push(res.body.data);
    }
    const listed = await daemon.request('GET', '/api/sessions/paced/queue');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.data.map((e: { id: string }) => e.id), queued.map((q) => q.queueId));
    assert.deepEqual(listed.body.data.map((e: { position: number }) => e.position), [1, 2, 3]);
    assert.equal(listed.body.data[2].commandId, queued[2].commandId);

    const cancelled = await daemon.request('DELETE', `/api/sessions/paced/queue/${queued[2].queueId}`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal((await daemon.request('DELETE', `/api/sessions/paced/queue/${queued[2].queueId}`)).body.error.code, 'QUEUE_ENTRY_NOT_FOUND');

    // a sync send behind them is held until its turn, then answered as any send
    const held = await send('paced', friends[0]!, 'held');
    assert.equal(held.status, 200, JSON.stringify(held.body));
    for (const q of queued.slice(0, 2)) assert.equal((await daemon.request('GET', `/api/sessions/paced/messages/${q.messageId}`)).status, 200, 'a queued send went out under its id');
    assert.equal((await daemon.request('GET', `/api/sessions/paced/messages/${queued[2].messageId}`)).status, 404, 'the cancelled send never went out');
    assert.deepEqual((await daemon.request('GET', '/api/sessions/paced/queue')).body.data, []);
  });

  test('a queued async send with an Idempotency-Key is queued once: the retry replays its 202', async () => {
    const friend = '+15550311009';
    assert.equal((await write('paced', friend)).status, 200);
    // behind the pace: the first takes the bucket's turn, the keyed one waits
    await send('paced', friend, 'turn', ASYNC);
    const headers = { ...ASYNC, 'Idempotency-Key': 'order-4711' };
    const first = await send('paced', friend, 'keyed', headers);
    const retry = await send('paced', friend, 'keyed', headers);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.data.status, 'queued');
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replayed'), retry.body.data], [202, 'true', first.body.data]);
    const queue = (await daemon.request('GET', '/api/sessions/paced/queue')).body.data as Array<{ messageId: string }>;
    assert.equal(queue.filter((e) => e.messageId === first.body.data.messageId).length, 1);
  });

  test('reading the queue takes sessions:read, cancelling messages:send', async () => {
    const reader = (await daemon.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['sessions:read'] })).body.data.key;
    assert.equal((await daemon.request('GET', '/api/sessions/paced/queue', undefined, reader)).status, 200);
    const refused = await daemon.request('DELETE', '/api/sessions/paced/queue/7c9e6679-7425-40de-944b-e07fc1f90ae7', undefined, reader);
    assert.equal(refused.body.error.code, 'FORBIDDEN_SCOPE');
  });
});

describe('caps and exemptions', () => {
  let sender: { id: string; key: string };

  before(async () => {
    // the master key may loosen the pace of a session (no queueing in these tests), keeping its caps
    const loosened = await daemon.request('PATCH', '/api/sessions/capped', { config: { governor: { perMinute: 600, burst: 100 } } });
    assert.equal(loosened.status, 200, JSON.stringify(loosened.body));
    const created = await daemon.request('POST', '/api/admin/keys', { name: 'sender', scopes: ['messages:send', 'sessions:manage', 'sessions:read'] });
    sender = { id: created.body.data.id, key: created.body.data.key };
  });

  test("a first message past the day's cap is 429 SEND_CAP_REACHED with Retry-After and the cap's name; people who wrote are not counted", async () => {
    assert.equal((await send('capped', '+15550312001', 'one')).status, 200);
    assert.equal((await send('capped', '+15550312002', 'two', ASYNC)).status, 202);
    // a second message to someone already counted today is not a new first contact
    assert.equal((await send('capped', '+15550312001', 'again')).status, 200);
    const refused = await send('capped', '+15550312003', 'three');
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'SEND_CAP_REACHED');
    assert.equal(refused.body.error.details[0].path, '/governor/firstContactsPerDay');
    assert.match(refused.body.error.message, /firstContactsPerDay \(2 a day\)/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1 && Number(refused.headers.get('retry-after')) <= 86_400);
    assert.equal((await send('capped', '+15550312003', 'three', ASYNC)).status, 429, 'an async send is refused the same');
    // someone who wrote is answered whatever the cap
    assert.equal((await write('capped', '+15550312004')).status, 200);
    assert.equal((await send('capped', '+15550312004', 'a reply')).status, 200);
  });

  test('a first message WhatsApp refused (463) went out and keeps counting toward the cap', async () => {
    await pairedSession(daemon, 'refusing', '+15550310003');
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/refusing/faults/nack', { code: '463' })).status, 200);
    const refused = await send('refusing', '+15550313001', 'one');
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'MESSAGE_REFUSED');
    // the pace's one-send burst is spent: the next waits its turn in the queue (the request is held)
    assert.equal((await send('refusing', '+15550313002', 'two')).status, 200);
    const capped = await send('refusing', '+15550313003', 'three');
    assert.equal(capped.status, 429, JSON.stringify(capped.body));
    assert.equal(capped.body.error.code, 'SEND_CAP_REACHED');
  });

  test('only the master key exempts; an exempted key skips the cap, and the exemption is audited', async () => {
    const byKey = await daemon.request('PATCH', '/api/sessions/capped', { config: { governor: { exempt: true } } }, sender.key);
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.details[0].path, '/config/governor/exempt');
    assert.equal((await daemon.request('PATCH', `/api/admin/keys/${sender.id}`, { governorExempt: true }, sender.key)).body.error.code, 'FORBIDDEN_SCOPE');
    // a key may tighten
    assert.equal((await daemon.request('PATCH', '/api/sessions/capped', { config: { governor: { perMinute: 10, burst: 1, recipientGapSeconds: 2 } } }, sender.key)).status, 200);
    // but not undo the session's current settings, not even back to the gateway's
    const faster = await daemon.request('PATCH', '/api/sessions/capped', { config: { governor: { perMinute: 12, burst: 1, recipientGapSeconds: 2 } } }, sender.key);
    assert.equal(faster.status, 403, JSON.stringify(faster.body));
    assert.deepEqual(faster.body.error.details.map((d: { path: string }) => d.path), ['/config/governor/perMinute']);
    assert.equal((await daemon.request('PATCH', '/api/sessions/capped', { config: { governor: null } }, sender.key)).status, 403);

    assert.equal((await send('capped', '+15550312005', 'cold', {}, sender.key)).status, 429);
    const exempted = await daemon.request('PATCH', `/api/admin/keys/${sender.id}`, { governorExempt: true });
    assert.equal(exempted.status, 200, JSON.stringify(exempted.body));
    assert.equal(exempted.body.data.governorExempt, true);
    assert.equal((await send('capped', '+15550312005', 'cold', {}, sender.key)).status, 200, 'the exempted key is not capped');
    assert.equal((await send('capped', '+15550312006', 'cold')).status, 429, 'the master key still is');

    const session = await daemon.request('PATCH', '/api/sessions/capped', { config: { governor: { exempt: true } } });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal((await send('capped', '+15550312006', 'cold')).status, 200, 'an exempted session is not capped');

    const audit = (await daemon.request('GET', '/api/admin/audit?limit=1000')).body.data as Array<{ action: string; target: string; outcome: string; details: any; actor: { kind: string } }>;
    const keyUpdates = audit.filter((e) => e.action === 'key.update' && e.target === sender.id);
    assert.deepEqual(keyUpdates.map((e) => [e.outcome, e.actor.kind, e.details?.governorExempt ?? null]).sort(), [['failed', 'key', null], ['succeeded', 'master', true]].sort());
    const sessionExempt = audit.find((e) => e.action === 'session.update' && e.outcome === 'succeeded' && e.details?.governor?.exempt === true);
    assert.equal(sessionExempt?.actor.kind, 'master');
  });
});

describe('the defaults', () => {
  let plain: TestDaemon;
  before(async () => {
    plain = await startDaemon({ env: { GATEWAY_GOVERNOR_ENABLED: 'true' } });
    await pairedSession(plain, 'shop', '+15550330001');
  });
  after(() => plain?.cleanup());

  test('a normal integration (a reply to each person who wrote, a few at once) is never queued', async () => {
    const customers = Array.from({ length: 5 }, (_, i) => `+1555033100${i}`);
    for (const customer of customers) assert.equal((await plain.request('POST', '/api/sandbox/sessions/shop/inbound', { from: customer, type: 'text', text: 'hi' })).status, 200);
    for (const customer of customers) {
      const res = await plain.request('POST', '/api/sessions/shop/messages/send', { chatId: customer, type: 'text', text: 'hello, how can we help?' }, undefined, ASYNC);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.data.status, 'accepted', 'sent at once, not queued');
    }
  });
});
