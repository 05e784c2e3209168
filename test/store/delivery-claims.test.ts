// Issue 22, the outbox across nodes, on a real PostgreSQL (Debian's, started by the test): each node claims due deliveries
// before attempting them, oldest first, within the webhook's in-flight cap counted across nodes, never while another node
// is claiming for that webhook; a node that dies mid-attempt leaves its deliveries to another once its claims lapse, and
// its late outcome is not written over the other's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTickTransaction, type Db } from '../../src/store/db.js';
import { createOutboxRepo, type DeliveryOutcome } from '../../src/store/outbox.js';
import { pgStores, startPostgres, type TestPostgres } from '../helpers/postgres.js';

const CAP = 16;
let server: TestPostgres;
const databases = pgStores();

before(async () => {
  server = await startPostgres();
});

after(async () => {
  await databases.closeAll();
  server?.stop();
});

const open = (url: string): Promise<Db> => databases.open(url);

/** A fresh database with one webhook and `count` pending deliveries due now, created in order d000, d001, … */
async function outbox(name: string, count: number): Promise<{ url: string; admin: Db; webhookId: number }> {
  const url = server.createDatabase(name);
  const admin = await open(url);
  const { id } = (await admin.prepare(`INSERT INTO webhooks (url, retry_attempts, retry_delay_seconds, retry_policy, hmac_key, created_at, updated_at)
    VALUES ('http://127.0.0.1/hook', 3, 5, 'exponential', 'k', 'now', 'now') RETURNING id`).get()) as { id: number };
  const insert = admin.prepare(`INSERT INTO deliveries (id, webhook_id, event_id, event, session, body, next_attempt_at, created_at, updated_at)
    VALUES (?, ?, ?, 'message.received', 's', '{}', 0, 0, 0)`);
  await admin.transaction(async () => {
    for (let i = 0; i < count; i++) await insert.run(`d${String(i).padStart(3, '0')}`, id, `e${i}`);
  })();
  return { url, admin, webhookId: id };
}

const node = async (url: string, nodeId: string, claimMs = 30_000) => {
  const db = await open(url);
  return { db, outbox: createOutboxRepo(db, { nodeId, claimMs, perWebhook: CAP }) };
};
const succeeded = (id: string, code = 200): DeliveryOutcome => ({ id, status: 'succeeded', attempts: 1, budgetStart: 0, nextAttemptAt: null, lastStatusCode: code, lastError: null, at: Date.now() });
const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `d${String(from + i).padStart(3, '0')}`);

test('claims are the oldest due rows, within the cap counted across nodes; none while another node is claiming', async () => {
  const { url, webhookId } = await outbox('claims_cap', 100);
  const [a, b] = [await node(url, 'a'), await node(url, 'b')];
  assert.equal(a.outbox.shared, true);
  const tick = createTickTransaction(a.db, (err) => assert.fail(String(err)));
  tick.join();
  const first = await a.outbox.due(webhookId, Date.now(), 64);
  assert.deepEqual(ids(first), range(0, CAP), 'the oldest, in order, up to the cap');
  // a's transaction is still open: b does not wait for it, and takes nothing
  assert.deepEqual(await b.outbox.due(webhookId, Date.now(), 64), []);
  await tick.committed();
  assert.deepEqual(await b.outbox.due(webhookId, Date.now(), 64), [], 'every place of the cap is taken, by a');
  await a.outbox.recordOutcomes(first.slice(0, 10).map((d) => succeeded(d.id)));
  const next = await b.outbox.due(webhookId, Date.now(), 64);
  assert.deepEqual(ids(next), range(CAP, CAP + 10), 'as many as a freed, the next oldest');
});

test('a node that dies mid-attempt leaves its deliveries to another once its claims lapse; its late outcome is refused', async () => {
  const { url, admin, webhookId } = await outbox('claims_lapse', 4);
  const [a, b] = [await node(url, 'a', 400), await node(url, 'b')];
  const taken = await a.outbox.due(webhookId, Date.now(), 64);
  assert.equal(taken.length, 4);
  assert.deepEqual(await b.outbox.due(webhookId, Date.now(), 64), [], 'claimed by a, not yet lapsed');
  await new Promise((r) => setTimeout(r, 500));
  const retaken = await b.outbox.due(webhookId, Date.now(), 64);
  assert.deepEqual(ids(retaken), ids(taken));
  assert.ok(retaken.every((d) => d.attempts === 0), 'the lapsed attempt left no trace');
  // a comes back late with its outcomes: not written; b's are
  await a.outbox.recordOutcomes(taken.map((d) => succeeded(d.id, 299)));
  await b.outbox.recordOutcomes(retaken.map((d) => succeeded(d.id)));
  const rows = (await admin.prepare('SELECT last_status_code AS code, status, claimed_by AS "claimedBy" FROM deliveries ORDER BY id').all()) as Array<{ code: number; status: string; claimedBy: string | null }>;
  assert.deepEqual(rows, taken.map(() => ({ code: 200, status: 'succeeded', claimedBy: null })));
});

test('deliveries not yet due, or of another webhook, are not claimed', async () => {
  const { url, admin, webhookId } = await outbox('claims_due', 2);
  await admin.prepare("UPDATE deliveries SET next_attempt_at = ? WHERE id = 'd001'").run(Date.now() + 60_000);
  const a = await node(url, 'a');
  assert.deepEqual(ids(await a.outbox.due(webhookId, Date.now(), 64)), ['d000']);
  assert.deepEqual(await a.outbox.due(webhookId + 1, Date.now(), 64), []);
});
