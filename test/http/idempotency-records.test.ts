// IdempotentRequests on a real SQLite store: what a key's record says once its request ended, and a previous run's
// request that never ended (a daemon killed while it sent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/errors.js';
import { IdempotentRequests } from '../../src/http/idempotency.js';
import { createTickTransaction, openDatabase } from '../../src/store/db.js';
import { createIdempotencyRepo } from '../../src/store/idempotency.js';

const request = { method: 'POST', path: '/api/messages/send', body: { text: 'hi' }, variant: '' };
const code = (err: unknown) => (err instanceof GatewayError ? err.code : String(err));

test('a failure after the send may have happened leaves the key unknown; a refusal frees it; an answer is kept', async () => {
  const db = openDatabase(':memory:');
  const tick = createTickTransaction(db, () => {});
  const requests = new IdempotentRequests(createIdempotencyRepo(db), () => tick.committed());
  const first = await requests.begin(undefined, 'k1', request);
  assert.equal(first.replay, false);
  await assert.rejects(requests.begin(undefined, 'k1', request), (err) => code(err) === 'IDEMPOTENCY_KEY_IN_FLIGHT');
  if (!first.replay) await first.end({ error: new Error('the network dropped after the message went out') });
  await assert.rejects(requests.begin(undefined, 'k1', request), (err) => code(err) === 'IDEMPOTENCY_OUTCOME_UNKNOWN');

  const refused = await requests.begin(undefined, 'k2', request);
  if (!refused.replay) await refused.end({ error: new GatewayError('SESSION_NOT_CONNECTED', 'not connected') });
  const retried = await requests.begin(undefined, 'k2', request);
  assert.equal(retried.replay, false, 'a 4xx sent nothing: the retry runs');
  if (!retried.replay) await retried.end({ status: 202, data: { commandId: 'c1' } });
  assert.deepEqual(await requests.begin(undefined, 'k2', request), { replay: true, status: 202, data: { commandId: 'c1' } });
  await assert.rejects(requests.begin(undefined, 'k2', { ...request, variant: 'respond-async' }), (err) => code(err) === 'IDEMPOTENCY_KEY_REUSED');
  await db.close();
});

test("a previous run's request that never ended is in flight for two minutes (another node may run it), then unknown", async () => {
  const db = openDatabase(':memory:');
  const tick = createTickTransaction(db, () => {});
  const repo = createIdempotencyRepo(db);
  const killed = new IdempotentRequests(repo, () => tick.committed());
  await killed.begin({ kind: 'key', id: 'k', family: 'k', name: 'n', scopes: new Set(['*']), sessions: null, rateLimitPerMinute: null }, 'left', request);
  const next = new IdempotentRequests(repo, () => tick.committed());
  const caller = { kind: 'key' as const, id: 'k', family: 'k', name: 'n', scopes: new Set(['*']), sessions: null, rateLimitPerMinute: null };
  await assert.rejects(next.begin(caller, 'left', request), (err) => code(err) === 'IDEMPOTENCY_KEY_IN_FLIGHT');
  await db.sqlite.prepare("UPDATE idempotency_keys SET created_at = created_at - 121000").run();
  await assert.rejects(next.begin(caller, 'left', request), (err) => code(err) === 'IDEMPOTENCY_OUTCOME_UNKNOWN');
  // another caller's key of the same name is its own
  assert.equal((await next.begin(undefined, 'left', request)).replay, false);
  // past 24 hours the key is new again
  await db.sqlite.prepare('UPDATE idempotency_keys SET expires_at = 0').run();
  assert.equal((await next.begin(caller, 'left', request)).replay, false);
  assert.equal(await next.pruneExpired(), 1, "the other caller's expired key is pruned; the one taken again is not");
  await db.close();
});

test("a key of this run whose outcome was lost with its tick is unknown at once, not in flight until a restart", async () => {
  const db = openDatabase(':memory:');
  const tick = createTickTransaction(db, () => {});
  const requests = new IdempotentRequests(createIdempotencyRepo(db), () => tick.committed());
  const first = await requests.begin(undefined, 'lost', request);
  assert.equal(first.replay, false);
  // the answer's record is written into a tick that is then lost: the record still says pending, this run's
  tick.join();
  tick.abort(new Error('the disk filled up'));
  if (!first.replay) await first.end({ status: 200, data: { messageId: 'M1' } }).catch(() => {});
  tick.flush();
  await tick.committed()?.catch(() => {});
  assert.equal((await db.sqlite.prepare("SELECT state FROM idempotency_keys WHERE key = 'lost'").pluck().get()), 'pending');
  await assert.rejects(requests.begin(undefined, 'lost', request), (err) => code(err) === 'IDEMPOTENCY_OUTCOME_UNKNOWN');
  await db.close();
});
