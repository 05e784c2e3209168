// Pruning of the webhook delivery log (issue 16): succeeded and failed rows older than the cut-off go, pending rows never.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTickTransaction, openDatabase, type Db } from '../../src/store/db.js';
import { createOutboxRepo, type DeliveryStatus, type OutboxRepo } from '../../src/store/outbox.js';
import { insertWebhook } from '../helpers/webhook-rows.js';

describe('outbox pruning', () => {
  let dir: string;
  let db: Db;
  let outbox: OutboxRepo;
  let webhookId: number;
  const NOW = 1_800_000_000_000;
  const DAY = 86_400_000;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-prune-'));
    db = openDatabase(join(dir, 'gateway.db'));
    outbox = createOutboxRepo(db);
    webhookId = await insertWebhook(db, 'http://127.0.0.1:9/hook');
  });

  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes a delivery in `status`, last updated `ageDays` before NOW. */
  async function delivery(id: string, status: DeliveryStatus, ageDays: number): Promise<void> {
    const at = NOW - ageDays * DAY;
    await outbox.recordEvent([{ id, webhookId, eventId: `e-${id}`, event: 'session.status', session: 's', body: '{}' }], at);
    await outbox.recordOutcomes([
      { id, status, attempts: 1, budgetStart: 0, nextAttemptAt: status === 'pending' ? NOW + DAY : null, lastStatusCode: 500, lastError: 'x', at },
    ]);
  }

  it('removes old succeeded and failed rows, keeps recent ones and every pending row however old', async () => {
    await delivery('old-ok', 'succeeded', 10);
    await delivery('old-failed', 'failed', 10);
    await delivery('older-failed', 'failed', 400);
    await delivery('old-pending', 'pending', 400);
    await delivery('new-ok', 'succeeded', 1);
    await delivery('new-failed', 'failed', 1);
    const removed = await outbox.pruneFinished(NOW - 7 * DAY);
    assert.equal(removed, 3);
    const left = (await outbox.list(webhookId, undefined, 100, 0)).rows.map((r) => r.id).sort();
    assert.deepEqual(left, ['new-failed', 'new-ok', 'old-pending']);
    assert.equal(await outbox.pruneFinished(NOW - 7 * DAY), 0);
  });

  it('works through more rows than one batch', async () => {
    const ids = Array.from({ length: 12_000 }, (_, i) => `bulk-${i}`);
    // in one transaction, the tick's (a transaction of the store may not start another inside it)
    const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
    tick.join();
    for (const [i, id] of ids.entries()) await delivery(id, i % 2 ? 'failed' : 'succeeded', 30);
    await tick.committed();
    assert.equal(await outbox.pruneFinished(NOW - 7 * DAY), 12_000);
    assert.equal((await outbox.list(webhookId, undefined, 100, 0)).total, 3);
  });
});
