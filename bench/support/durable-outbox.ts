// The least a durable gateway writes for each event it reports to a webhook (DESIGN §4), through the daemon's own
// repositories and schema, batched as the daemon batches: rows in the event-loop tick's transaction, outcomes gathered for
// the dispatcher's default 10 ms and written in one transaction. The durable baselines of the send and webhooks benches.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { createTickTransaction, openDatabase } from '../../src/store/db.js';
import { createMessagesRepo } from '../../src/store/messages.js';
import { createOutboxRepo, type DeliveryOutcome } from '../../src/store/outbox.js';
import { createSessionsRepo } from '../../src/store/sessions.js';
import { createWebhooksRepo } from '../../src/store/webhooks.js';

/** how long outcomes are gathered before one transaction writes them: the dispatcher's default flushIntervalMs */
const OUTCOME_FLUSH_MS = 10;

export interface DurableOutbox {
  /** an event's delivery row (and, with `sentText`, the sent message's row) in the tick's transaction; settles once committed */
  record(deliveryId: string, event: string, body: string, sent?: { chatId: string; text: string }): Promise<void> | undefined;
  /** the delivery's POST succeeded: its outcome is written with the others of the next 10 ms */
  succeeded(deliveryId: string): void;
  /** settles once every outcome so far is committed */
  written(): Promise<void>;
  close(): Promise<void>;
}

export async function durableOutbox(onLost: (err: unknown) => void): Promise<DurableOutbox> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-durable-'));
  const db = openDatabase(join(dir, 'gateway.db'));
  const box = createSecretBox(Buffer.alloc(32, 7));
  await createSessionsRepo(db, box).insert({ name: 'bench', engine: 'sandbox', config: {} });
  const webhookId = (
    await createWebhooksRepo(db, box).insert({
      url: 'http://127.0.0.1/bench', events: [], session: null, enabled: true, headers: [],
      retries: { attempts: 3, delaySeconds: 5, policy: 'exponential' }, hmacKey: 'bench', signatureScheme: 'body',
    })
  ).id;
  const tick = createTickTransaction(db, onLost);
  const messages = createMessagesRepo(db, box);
  const outbox = createOutboxRepo(db);
  let outcomes: DeliveryOutcome[] = [];
  const flush = () => {
    tick.join();
    // in the tick (a savepoint of it), as the dispatcher writes them; `written` waits for that tick's commit
    outbox.recordOutcomes(outcomes).catch(onLost);
    outcomes = [];
  };
  return {
    record(deliveryId, event, body, sent) {
      tick.join();
      const now = Date.now();
      if (sent) {
        messages.insert({ session: 'bench', chatId: sent.chatId, id: randomUUID(), sender: null, fromMe: true, type: 'text', text: sent.text, mediaId: null, quotedId: null, status: 'sent', secret: null, extra: null, raw: null, timestamp: now });
      }
      // one row: staged into the tick, as the daemon's outbox persister writes it
      Promise.resolve(outbox.recordEvent([{ id: deliveryId, webhookId, eventId: deliveryId, event, session: 'bench', body }], now)).catch(onLost);
      return tick.committed();
    },
    succeeded(deliveryId) {
      if (outcomes.length === 0) setTimeout(flush, OUTCOME_FLUSH_MS);
      outcomes.push({ id: deliveryId, status: 'succeeded', attempts: 1, budgetStart: 0, nextAttemptAt: null, lastStatusCode: 200, lastError: null, at: Date.now() });
    },
    written: () => new Promise((done) => setTimeout(() => setImmediate(done), OUTCOME_FLUSH_MS + 1)),
    async close() {
      tick.flush();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
