// `gateway sessions queue NAME [--cancel ID]` against a real daemon whose send governor queues: the table and --json
// list the waiting sends in order, --cancel takes one out, an unknown id is a one-line error and a non-zero exit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor } from '../helpers/cli.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
const gateway = cliFor(() => daemon);

before(async () => {
  // one send every 30 s once the burst of one is spent: what is queued stays queued for the test
  daemon = await startDaemon({ env: { GATEWAY_GOVERNOR_ENABLED: 'true', GATEWAY_LOG_LEVEL: 'warn' }, config: 'governor:\n  perMinute: 2\n  burst: 1\n  recipientGapSeconds: 0\n' });
  await pairedSession(daemon, 'q', '+15550340001');
});
after(() => daemon.cleanup());

test('lists the queue next first, cancels an entry, refuses an unknown one', async () => {
  const friend = '+15550341001';
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/q/inbound', { from: friend, type: 'text', text: 'hi' })).status, 200);
  const send = (text: string) => daemon.request('POST', '/api/sessions/q/messages/send', { chatId: friend, type: 'text', text }, undefined, { Prefer: 'respond-async' });
  assert.equal((await send('now')).body.data.status, 'accepted');
  const queued = [(await send('first')).body.data, (await send('second')).body.data];
  assert.deepEqual(queued.map((q) => q.status), ['queued', 'queued']);

  const json = await gateway('--json', 'sessions', 'queue', 'q');
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout).map((e: { id: string; position: number }) => [e.id, e.position]), [[queued[0].queueId, 1], [queued[1].queueId, 2]]);
  const table = await gateway('sessions', 'queue', 'q');
  assert.equal(table.code, 0, table.stderr);
  assert.ok(table.stdout.indexOf(queued[0].messageId) < table.stdout.indexOf(queued[1].messageId), table.stdout);

  const cancelled = await gateway('sessions', 'queue', 'q', '--cancel', queued[1].queueId);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.match(cancelled.stdout, /cancelled/);
  assert.deepEqual(JSON.parse((await gateway('--json', 'sessions', 'queue', 'q')).stdout).map((e: { id: string }) => e.id), [queued[0].queueId]);

  const unknown = await gateway('sessions', 'queue', 'q', '--cancel', queued[1].queueId);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /QUEUE_ENTRY_NOT_FOUND|not found/);
});
