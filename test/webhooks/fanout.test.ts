// Issue 27 item 4, fan-out: the events one tick has no room for are recorded once with their webhooks and their
// delivery rows written from there a chunk per turn of the event loop, oldest first, so that a burst to 100 webhooks
// never holds the loop; a chunk and what is left of its fan-outs commit together, so a crash loses or repeats nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { createLogger } from '../../src/logger.js';
import { createTickTransaction, openDatabase, type Db, type TickTransaction } from '../../src/store/db.js';
import { createFanoutsRepo } from '../../src/store/fanouts.js';
import { createOutboxRepo, type NewDelivery } from '../../src/store/outbox.js';
import { insertWebhook } from '../helpers/webhook-rows.js';
import type { GatewayEvent } from '../../src/events/catalogue.js';
import type { WebhookRegistry } from '../../src/webhooks/registry.js';
import { FanoutExpander } from '../../src/webhooks/fanout.js';
import { createOutbox } from '../../src/webhooks/outbox.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('fan-out of events to many webhooks', () => {
  let dir: string;
  let db: Db;
  let tick: TickTransaction;
  let webhookIds: number[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fanout-'));
    db = openDatabase(join(dir, 'gateway.db'));
    tick = createTickTransaction(db, (err) => assert.fail(String(err)));
    webhookIds = [];
    for (let i = 0; i < 10; i++) webhookIds.push(await insertWebhook(db, `http://127.0.0.1:9/hook-${i}`));
  });

  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const event = (n: number): GatewayEvent => ({ id: `event-${n}`, event: 'message.received', session: 's', seq: n, timestamp: new Date(1_800_000_000_000 + n).toISOString(), payload: { n } });
  const rowsOf = async () => (await db.prepare('SELECT event_id AS eventId, webhook_id AS webhookId, body FROM deliveries ORDER BY rowid').all()) as Array<{ eventId: string; webhookId: number; body: string }>;

  it('a tick writes up to its budget itself; the rest is written from the store in chunks, every row once, in order', async () => {
    const expander = new FanoutExpander({ fanouts: createFanoutsRepo(db), beginWrite: tick.join, onWritten: (rows) => woken.push(...rows), logger: createLogger('silent'), chunkRows: 7 });
    const woken: NewDelivery[] = [];
    const registry = { matching: () => webhookIds.map((id) => ({ id })) } as unknown as WebhookRegistry;
    const persist = createOutbox({ registry, outbox: createOutboxRepo(db), box: createSecretBox(Buffer.alloc(32, 5)), fanout: expander, tickRows: 25, onWritten: (rows) => woken.push(...rows) });

    tick.join();
    for (let n = 0; n < 6; n++) persist(event(n));
    // the first two events fit the tick's 25 rows; the other four wait as one row each
    assert.equal((await rowsOf()).length, 20);
    assert.equal(await createFanoutsRepo(db).count(), 4);
    assert.equal((await createOutboxRepo(db).backlog()).pending, 60, 'the backlog counts the rows still to be written');
    await turn();
    // at most 7 rows a turn
    const afterOneTurn = (await rowsOf()).length;
    assert.ok(afterOneTurn <= 27, `${afterOneTurn} rows after one turn`);
    // an event while some wait queues behind them, though the next tick has room
    tick.join();
    persist(event(6));
    for (let i = 0; i < 20 && (await createFanoutsRepo(db).count()) > 0; i++) await turn();
    await tick.committed();
    assert.equal(await createFanoutsRepo(db).count(), 0);

    const rows = await rowsOf();
    assert.equal(rows.length, 70);
    assert.deepEqual(new Set(rows.map((r) => `${r.eventId}/${r.webhookId}`)).size, 70, 'every event and webhook once');
    assert.deepEqual([...new Set(rows.map((r) => r.eventId))], Array.from({ length: 7 }, (_, n) => `event-${n}`), 'written in the order of the events');
    assert.equal(woken.length, 70, 'the dispatcher is told of every row');
    // the body is the envelope the direct path writes, with the delivery's own id
    const body = JSON.parse(rows.at(-1)!.body);
    assert.deepEqual(Object.keys(body), ['id', 'event', 'session', 'seq', 'timestamp', 'payload']);
    assert.deepEqual([body.event, body.session, body.timestamp, body.payload], ['message.received', 's', event(6).timestamp, { n: 6 }]);
    expander.stop();
  });

  it('a chunk whose transaction is lost leaves its fan-out whole, expanded again later; deleted webhooks are skipped', async () => {
    await db.prepare('DELETE FROM deliveries').run();
    const fanouts = createFanoutsRepo(db);
    fanouts.add({ eventId: 'kept', event: 'message.received', session: 's', seq: 1, timestamp: new Date().toISOString(), payload: '{}', webhookIds });
    // a chunk that rolls back (a crash before its commit)
    await db.exec('BEGIN');
    const { written } = await fanouts.expand(4, (f, webhookId) => ({ id: `${f.eventId}-${webhookId}-rolled-back`, webhookId, eventId: f.eventId, event: f.event, session: f.session, body: '{}' }));
    assert.equal(written.length, 4);
    await db.exec('ROLLBACK');
    assert.equal(await fanouts.count(), 1);
    assert.equal((await rowsOf()).length, 0);

    await db.prepare('DELETE FROM webhooks WHERE id = ?').run(webhookIds[9]);
    const expander = new FanoutExpander({ fanouts, beginWrite: tick.join, onWritten: () => {}, logger: createLogger('silent'), chunkRows: 4 });
    expander.start();
    for (let i = 0; i < 20 && (await fanouts.count()) > 0; i++) await turn();
    await tick.committed();
    expander.stop();
    assert.equal(await fanouts.count(), 0);
    assert.deepEqual((await rowsOf()).map((r) => r.webhookId), webhookIds.slice(0, 9), 'each live webhook once, the deleted one not');
  });
});
