// Issue 22, the outbox across nodes, on a real PostgreSQL (Debian's, started by the test): nodes claiming at once get
// disjoint deliveries, oldest first, within the webhook's in-flight cap counted across nodes; a node that dies mid-attempt
// leaves its deliveries to another once its claims lapse, and its late outcome is not written over the other's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDeliveryClaimsRepo } from '../../src/store/delivery-claims.js';
import type { DeliveryOutcome } from '../../src/store/outbox.js';
import { connectPostgres, migratePostgres, type PgSql } from '../../src/store/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const CAP = 16;
let server: TestPostgres;
const connections: PgSql[] = [];

before(async () => {
  server = await startPostgres();
});

after(async () => {
  await Promise.all(connections.map((sql) => sql.end({ timeout: 1 })));
  server?.stop();
});

function connect(url: string): PgSql {
  const sql = connectPostgres(url, { max: 4 });
  connections.push(sql);
  return sql;
}

/** A fresh database with one webhook and `count` pending deliveries due now, created in order d000, d001, … */
async function outbox(name: string, count: number): Promise<{ url: string; admin: PgSql; webhookId: number }> {
  const url = server.createDatabase(name);
  const admin = connect(url);
  await migratePostgres(admin);
  const [{ id }] = await admin<Array<{ id: number }>>`INSERT INTO webhooks (url, retry_attempts, retry_delay_seconds, retry_policy, hmac_key, created_at, updated_at)
    VALUES ('http://127.0.0.1/hook', 3, 5, 'exponential', 'k', 'now', 'now') RETURNING id`;
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(3, '0');
    await admin`INSERT INTO deliveries (id, webhook_id, event_id, event, session, body, next_attempt_at, created_at, updated_at)
      VALUES (${`d${n}`}, ${id!}, ${`e${n}`}, 'message.received', 's', '{}', 0, 0, 0)`;
  }
  return { url, admin, webhookId: id! };
}

const succeeded = (id: string): DeliveryOutcome => ({ id, status: 'succeeded', attempts: 1, budgetStart: 0, nextAttemptAt: null, lastStatusCode: 200, lastError: null, at: Date.now() });

test('nodes claiming at once get disjoint deliveries, oldest first, within the cap counted across them', async () => {
  const { url, webhookId } = await outbox('claims_cap', 100);
  const nodes = ['a', 'b', 'c'].map((id) => createDeliveryClaimsRepo(connect(url), id));
  const claimed = await Promise.all(nodes.map((repo) => repo.claim(webhookId, CAP, 64, 30_000)));
  const ids = claimed.flat().map((d) => d.id);
  assert.equal(ids.length, CAP, `claimed ${claimed.map((c) => c.length).join(' + ')}`);
  assert.equal(new Set(ids).size, CAP, 'a delivery was claimed twice');
  assert.deepEqual([...ids].sort(), Array.from({ length: CAP }, (_, i) => `d${String(i).padStart(3, '0')}`), 'the oldest ones');
  for (const batch of claimed) assert.deepEqual(batch.map((d) => d.id), [...batch.map((d) => d.id)].sort(), 'each batch oldest first');
  // nothing more while every place is taken; outcomes free places for anyone
  assert.deepEqual(await nodes[2]!.claim(webhookId, CAP, 64, 30_000), []);
  const first = claimed.find((batch) => batch.length > 0)!;
  const owner = nodes[claimed.indexOf(first)]!;
  assert.deepEqual(await owner.recordOutcomes(first.map((d) => succeeded(d.id))), first.map((d) => d.id));
  const next = await nodes[2]!.claim(webhookId, CAP, 64, 30_000);
  assert.equal(next.length, first.length);
  assert.ok(next.every((d) => !ids.includes(d.id)));
});

test("a node that dies mid-attempt leaves its deliveries to another once its claims lapse; its late outcome is refused", async () => {
  const { url, admin, webhookId } = await outbox('claims_lapse', 4);
  const [a, b] = [createDeliveryClaimsRepo(connect(url), 'a'), createDeliveryClaimsRepo(connect(url), 'b')];
  const taken = await a.claim(webhookId, CAP, 64, 400);
  assert.equal(taken.length, 4);
  assert.deepEqual(await b.claim(webhookId, CAP, 64, 30_000), [], 'claimed by a, not yet lapsed');
  await new Promise((r) => setTimeout(r, 500));
  const retaken = await b.claim(webhookId, CAP, 64, 30_000);
  assert.deepEqual(retaken.map((d) => d.id), taken.map((d) => d.id));
  assert.ok(retaken.every((d) => d.attempts === 0), 'the lapsed attempt left no trace');
  // a comes back late with its outcomes: not written; b's are
  assert.deepEqual(await a.recordOutcomes(taken.map((d) => ({ ...succeeded(d.id), lastStatusCode: 299 }))), []);
  assert.deepEqual(await b.recordOutcomes(retaken.map((d) => succeeded(d.id))), retaken.map((d) => d.id));
  const codes = await admin<Array<{ code: number; status: string }>>`SELECT last_status_code AS code, status FROM deliveries ORDER BY id`;
  assert.deepEqual(codes.map((row) => [row.code, row.status]), taken.map(() => [200, 'succeeded']));
});

test('deliveries not yet due, or of another webhook, are not claimed', async () => {
  const { url, admin, webhookId } = await outbox('claims_due', 2);
  await admin`UPDATE deliveries SET next_attempt_at = ${Date.now() + 60_000} WHERE id = 'd001'`;
  const claims = createDeliveryClaimsRepo(connect(url), 'a');
  assert.deepEqual((await claims.claim(webhookId, CAP, 64, 30_000)).map((d) => d.id), ['d000']);
  assert.deepEqual(await claims.claim(webhookId + 1, CAP, 64, 30_000), []);
});
