// Sandbox decryption fault routes: input rules and access, a retry plan that waits for its chat, and the session
// resource's decryption counters (present for a running session, absent from lists).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15551200001';
const V = '+15551200009';
const W = '+15551200008';

let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_UNDECRYPTABLE_AFTER_SECONDS: '1' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A);
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const fault = (path: string, body: unknown, session = 'a') => daemon.request('POST', `/api/sandbox/sessions/${session}/faults/${path}`, body);
const decryption = async () => (await daemon.request('GET', '/api/sessions/a')).body.data.decryption;

describe('sandbox decryption faults', () => {
  test('bad input is a 400 naming the field; an unknown session 404; a session not connected 409', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['undecryptable', { from: V }, '/recovered'],
      ['undecryptable', { from: 'not a number', recovered: true }, '/from'],
      ['undecryptable', { from: V, recovered: true, kind: 'sad' }, '/kind'],
      ['undecryptable', { from: V, recovered: true, text: '' }, '/text'],
      ['undecryptable', { from: V, recovered: 'yes' }, '/recovered'],
      ['retry-receipts', {}, '/count'],
      ['retry-receipts', { count: 0 }, '/count'],
      ['retry-receipts', { count: 21 }, '/count'],
      ['retry-receipts', { count: 1, chatId: 'status@broadcast' }, '/chatId'],
      ['retry-receipts', { count: 1, extra: true }, '/extra'],
    ];
    for (const [path, body, field] of cases) {
      const res = await fault(path, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.ok(JSON.stringify(res.body.error).includes(field), `${path} ${JSON.stringify(body)} names ${field}: ${JSON.stringify(res.body.error)}`);
    }
    assert.equal((await fault('retry-receipts', { count: 1 }, 'nobody')).status, 404);
    await daemon.request('POST', '/api/sessions', { name: 'idle', engine: 'sandbox' });
    const idle = await fault('undecryptable', { from: V, recovered: true }, 'idle');
    assert.equal(idle.status, 409, JSON.stringify(idle.body));
  });

  test('the fault routes take the master key only', async () => {
    const key = await daemon.request('POST', '/api/account/keys', { name: 'faults', scopes: ['*'] });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const res = await fetch(`${daemon.url}/api/sandbox/sessions/a/faults/retry-receipts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key.body.data.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ count: 1 }),
    });
    assert.equal(res.status, 403);
  });

  test('a retry plan for a chat waits for a message to that chat; others are delivered untouched', async () => {
    const before = await decryption();
    const armed = await fault('retry-receipts', { chatId: V, count: 3 });
    assert.equal(armed.status, 200, JSON.stringify(armed.body));
    const other = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: W, type: 'text', text: 'to someone else' });
    await events.next((e) => e.event === 'message.ack' && e.payload.messageId === other.body.data.messageId && e.payload.status === 'delivered');
    assert.equal((await decryption()).retryReceiptsReceived, before.retryReceiptsReceived);

    const target = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: V, type: 'text', text: 'asked for three times' });
    const failed = await events.next((e) => e.event === 'message.failed' && e.payload.messageId === target.body.data.messageId);
    assert.equal(failed.payload.reason, 'decryption_retry_exhausted');
    const after = await decryption();
    assert.equal(after.retryReceiptsReceived - before.retryReceiptsReceived, 3);
    assert.equal(after.retriesExhausted.outgoing - before.retriesExhausted.outgoing, 1);
  });

  test('an undecryptable message of the kind asked for; decryption counters only in GET of one session', async () => {
    const sent = await fault('undecryptable', { from: V, recovered: false, kind: 'spent_key' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const lost = await events.next((e) => e.event === 'message.undecryptable' && e.payload.messageId === sent.body.data.messageId);
    assert.equal(lost.payload.kind, 'spent_key');
    assert.equal((await decryption()).failures.spent_key, 1);
    const list = await daemon.request('GET', '/api/sessions');
    assert.equal(list.body.data.find((s: { name: string }) => s.name === 'a').decryption, undefined);
    assert.equal((await daemon.request('GET', '/api/sessions/idle')).body.data.decryption, undefined);
  });
});
