// The overview's per-minute counts (GET /api/admin/activity): only rows inside the window count, each in its minute, and
// every statement reads one index range and no table row, so a million older rows cost nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTickTransaction, openDatabase, type Db, type TickTransaction } from '../../src/store/db.js';
import { createActivityRepo, type ActivityRepo } from '../../src/store/activity.js';
import { createOutboxRepo, type DeliveryStatus, type OutboxRepo } from '../../src/store/outbox.js';
import { insertWebhook } from '../helpers/webhook-rows.js';

const MINUTE = 60_000;
/** a minute boundary, so the rows below land in known minutes */
const NOW = 29_000_000 * MINUTE;
const FROM = NOW - 60 * MINUTE;

describe('activity counts', () => {
  let dir: string;
  let db: Db;
  let activity: ActivityRepo;
  let outbox: OutboxRepo;
  let hooks: [number, number];
  let tick: TickTransaction;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'activity-'));
    db = openDatabase(join(dir, 'gateway.db'));
    activity = createActivityRepo(db);
    outbox = createOutboxRepo(db);
    tick = createTickTransaction(db, (err) => assert.fail(String(err)));
    hooks = [await insertWebhook(db, 'http://127.0.0.1:9/a'), await insertWebhook(db, 'http://127.0.0.1:9/b')];
    await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('s', 'sandbox', 'now', 'now');
  });

  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let messages = 0;
  async function insertMessage(at: number, fromMe: boolean): Promise<void> {
    await db.prepare("INSERT INTO messages (session, chat_id, id, from_me, type, status, timestamp) VALUES ('s', 'c@s.whatsapp.net', ?, ?, 'text', 'sent', ?)").run(`m${messages++}`, fromMe ? 1 : 0, at);
  }

  let deliveries = 0;
  async function delivery(webhookId: number, status: DeliveryStatus, at: number): Promise<void> {
    const id = `d${deliveries++}`;
    await outbox.recordEvent([{ id, webhookId, eventId: `e-${id}`, event: 'message.received', session: 's', body: '{}' }], at - 1000);
    await outbox.recordOutcomes([{ id, status, attempts: 1, budgetStart: 0, nextAttemptAt: status === 'pending' ? at + MINUTE : null, lastStatusCode: status === 'succeeded' ? 200 : 500, lastError: null, at }]);
  }

  it('counts messages by direction and deliveries by outcome per minute, inside [from, to) only', async () => {
    // one transaction, the tick's (a transaction of the store may not start another inside it)
    tick.join();
    await insertMessage(FROM - 1, false); // just before the window
    await insertMessage(FROM, false); // its first millisecond
    await insertMessage(FROM + 30_000, true);
    await insertMessage(NOW - 1, false); // its last millisecond
    await insertMessage(NOW - 1, false);
    await insertMessage(NOW, true); // just after
    await delivery(hooks[0], 'succeeded', FROM + 5 * MINUTE);
    await delivery(hooks[0], 'succeeded', FROM + 5 * MINUTE + 59_999);
    await delivery(hooks[1], 'failed', FROM + 10 * MINUTE);
    await delivery(hooks[1], 'failed', FROM - MINUTE);
    await delivery(hooks[0], 'failed', NOW - 1);
    await delivery(hooks[0], 'pending', FROM + 20 * MINUTE);
    await tick.committed();
    const first = FROM / MINUTE;
    assert.deepEqual(await activity.messagesPerMinute(FROM, NOW), {
      in: [{ minute: first, count: 1 }, { minute: first + 59, count: 2 }],
      out: [{ minute: first, count: 1 }],
    });
    assert.deepEqual(await activity.deliveriesPerMinute(FROM, NOW), {
      succeeded: [{ minute: first + 5, count: 2 }],
      failed: [{ minute: first + 10, count: 1 }, { minute: first + 59, count: 1 }],
    });
    assert.deepEqual(
      (await activity.failedPerWebhook(FROM, NOW)).sort((a, b) => a.webhookId - b.webhookId),
      [{ webhookId: hooks[0], count: 1 }, { webhookId: hooks[1], count: 1 }],
    );
  });

  it('reads each count from a covering index range: no table row and no full scan', async () => {
    // the repository's own statements, caught as it prepares them
    const statements: string[] = [];
    const spy = new Proxy(db, { get: (target, name) => (name === 'prepare' ? (sql: string) => (statements.push(sql), target.prepare(sql)) : Reflect.get(target, name)) });
    createActivityRepo(spy);
    assert.equal(statements.length, 4);
    for (const sql of statements) {
      const plan = ((await db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(FROM, NOW)) as Array<{ detail: string }>).map((row) => row.detail).join('; ');
      assert.match(plan, /^SEARCH \w+ USING COVERING INDEX (messages_by_time|deliveries_succeeded|deliveries_failed) \((timestamp|updated_at)>\? AND \2<\?\)/, plan);
      assert.doesNotMatch(plan, /SCAN/, plan);
    }
  });

  it('stays cheap with a million older rows', async () => {
    // a million messages from the 12 days before the window, written in one statement
    await db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
       INSERT INTO messages (session, chat_id, id, from_me, type, status, timestamp) SELECT 's', 'c@s.whatsapp.net', 'old' || i, i % 2, 'text', 'sent', ? - 1 - i * 1000 FROM n`,
    ).run(FROM);
    const started = performance.now();
    for (let i = 0; i < 20; i++) await activity.messagesPerMinute(FROM, NOW);
    const perCall = (performance.now() - started) / 20;
    assert.equal((await activity.messagesPerMinute(FROM, NOW)).in.length, 2);
    assert.ok(perCall < 5, `${perCall.toFixed(2)} ms a call with 1M rows outside the window`);
  });
});
