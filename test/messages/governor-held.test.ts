// Held sync sends (no Prefer: respond-async) waiting in the governor's queue give their in-flight places back: a caller
// with many of them still gets its other requests through, and past its share of waiting places a held send is refused
// with 429 SEND_QUEUE_FULL pointing at respond-async.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
const send = (text: string, headers: Record<string, string> = {}) =>
  daemon.request('POST', '/api/sessions/held/messages/send', { chatId: '+15550320002', type: 'text', text }, undefined, headers);

before(async () => {
  daemon = await startDaemon({
    env: { GATEWAY_GOVERNOR_ENABLED: 'true' },
    // one send a minute once the one-send burst is spent; two requests in flight for a caller, four in all
    config: 'server:\n  maxRequestsInFlight: 4\n  maxRequestsInFlightPerKey: 2\ngovernor:\n  perMinute: 1\n  burst: 1\n  jitterPercent: 0\n  recipientGapSeconds: 0\n  warmup: []\n',
  });
  await pairedSession(daemon, 'held', '+15550320001');
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/held/inbound', { from: '+15550320002', type: 'text', text: 'hello' })).status, 200);
});

after(() => daemon?.cleanup());

test('held sends hold no in-flight place; past the caller\'s waiting places a held send is 429 SEND_QUEUE_FULL', async () => {
  // the queue is watched with another key: the caller's own two places are for its sends
  const reader = (await daemon.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['sessions:read'] })).body.data.key as string;
  assert.equal((await send('now')).status, 200);
  const held = [send('held 1'), send('held 2')];
  const early: unknown[] = [];
  for (const answer of held) void answer.then((res) => early.push([res.status, res.body]));
  await waitFor(async () => {
    assert.deepEqual(early, [], 'a held send was answered before its turn');
    return (await daemon.request('GET', '/api/sessions/held/queue', undefined, reader)).body.data.length === 2;
  }, 20_000, 'both held sends in the queue');
  // the caller's two in-flight places are not taken by its waiting sends
  for (let i = 0; i < 3; i++) assert.equal((await daemon.request('GET', '/api/sessions/held')).status, 200);
  const refused = await send('held 3');
  assert.equal(refused.status, 429, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'SEND_QUEUE_FULL');
  assert.match(refused.body.error.message, /respond-async/);
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  // an async send still queues
  assert.equal((await send('async', { Prefer: 'respond-async' })).status, 202);
  for (const entry of (await daemon.request('GET', '/api/sessions/held/queue')).body.data) {
    assert.equal((await daemon.request('DELETE', `/api/sessions/held/queue/${entry.id}`)).status, 200);
  }
  for (const answer of await Promise.all(held)) assert.equal(answer.body.error.code, 'SEND_CANCELLED');
});
