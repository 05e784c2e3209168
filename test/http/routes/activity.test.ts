// GET /api/admin/activity: the console overview's per-minute counts, from what the daemon stored after real traffic
// (sandbox messages both ways, deliveries to a local receiver that answers 200 on one path and 500 on another).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.js';

let daemon: TestDaemon;
let receiver: Receiver;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  receiver = await startReceiver();
  receiver.answer = (delivery) => (delivery.path === '/fail' ? 500 : 200);
});
after(async () => {
  await receiver?.close();
  await daemon?.cleanup();
});

const sum = (values: number[]) => values.reduce((total, n) => total + n, 0);

test('counts messages in and out and deliveries succeeded and failed, per minute and per webhook', async () => {
  const empty = await daemon.request('GET', '/api/admin/activity');
  assert.equal(empty.status, 200);
  assert.equal(empty.body.data.window, '1h');
  assert.equal(empty.body.data.messagesIn.length, 60);
  assert.deepEqual(empty.body.data.totals, { messagesIn: 0, messagesOut: 0, deliveriesSucceeded: 0, deliveriesFailed: 0 });
  assert.deepEqual(empty.body.data.webhooks, []);

  await pairedSession(daemon, 'busy', '+15550700001');
  const events = ['message.received', 'message.sent'];
  const ok = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/ok`, events });
  const failing = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/fail`, events, retries: { attempts: 0 } });
  assert.equal(ok.status, 201);
  assert.equal(failing.status, 201);

  for (const text of ['one', 'two']) {
    assert.equal((await daemon.request('POST', '/api/messages/send', { session: 'busy', chatId: '+15550700002', type: 'text', text })).status, 200);
  }
  for (const text of ['a', 'b', 'c']) {
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/busy/inbound', { from: '+15550700003', type: 'text', text })).status, 200);
  }
  await receiver.waitForCount(5, '/ok');
  await receiver.waitForCount(5, '/fail');

  // the receiver has them; the outcomes are recorded a moment later
  const activity = await waitFor(
    async () => {
      const res = await daemon.request('GET', '/api/admin/activity');
      const totals = res.body.data.totals;
      return totals.deliveriesSucceeded === 5 && totals.deliveriesFailed === 5 ? res.body.data : undefined;
    },
    15_000,
    'the deliveries recorded',
  );
  assert.deepEqual(activity.totals, { messagesIn: 3, messagesOut: 2, deliveriesSucceeded: 5, deliveriesFailed: 5 });
  for (const series of ['messagesIn', 'messagesOut', 'deliveriesSucceeded', 'deliveriesFailed'] as const) {
    assert.equal(activity[series].length, 60, series);
    assert.equal(sum(activity[series]), activity.totals[series], series);
    // all of it happened within the last two minutes
    assert.equal(sum(activity[series].slice(-2)), activity.totals[series], series);
  }
  const from = Date.parse(activity.from);
  const to = Date.parse(activity.to);
  assert.equal(to - from, 60 * 60_000);
  assert.equal(from % 60_000, 0);
  assert.ok(to > Date.now() - 5_000 && to <= Date.now() + 60_000, 'the last minute is the current one');
  assert.deepEqual(activity.webhooks, [
    { id: ok.body.data.id, url: `${receiver.base}/ok`, enabled: true, failed: 0 },
    { id: failing.body.data.id, url: `${receiver.base}/fail`, enabled: true, failed: 5 },
  ]);

  const short = await daemon.request('GET', '/api/admin/activity?window=15m');
  assert.equal(short.status, 200);
  assert.equal(short.body.data.window, '15m');
  assert.equal(short.body.data.deliveriesFailed.length, 15);
  assert.deepEqual(short.body.data.totals, activity.totals);
});

test('an unknown window or parameter is 400 VALIDATION_FAILED', async () => {
  for (const [query, path] of [['window=2h', '/window'], ['window=', '/window'], ['since=1', '']] as const) {
    const res = await daemon.request('GET', `/api/admin/activity?${query}`);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.error.code, 'VALIDATION_FAILED', query);
    if (path) assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), JSON.stringify(res.body.error));
  }
});

test('no key is 401; an API key, even with every scope, is 403 FORBIDDEN_SCOPE', async () => {
  const anonymous = await daemon.request('GET', '/api/admin/activity', undefined, null);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.error.code, 'UNAUTHORIZED');
  for (const scopes of [['webhooks:manage', 'sessions:read'], ['*']]) {
    const key = (await daemon.request('POST', '/api/admin/keys', { name: `activity ${scopes.join(' ')}`, scopes })).body.data.key;
    const refused = await daemon.request('GET', '/api/admin/activity', undefined, key);
    assert.equal(refused.status, 403, scopes.join(' '));
    assert.equal(refused.body.error.code, 'FORBIDDEN_SCOPE');
  }
});
