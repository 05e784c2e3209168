// The send benchmark's baselines, run as a child process: a bare Koa route that reads and parses the same JSON body and
// answers. With WEBHOOK_URL set it also POSTs one signed envelope per request to that receiver, at most IN_FLIGHT at a
// time like one webhook of the daemon: the least work any gateway that reports its sends to a webhook can do.
// With DURABLE_DIR set as well it also does the least a durable gateway must write (DESIGN §4), through the daemon's own
// repositories and schema: the sent message's row and the event's delivery row in the tick's transaction, the answer
// after their commit, and the POST's outcome recorded afterwards (outcomes gathered for 10 ms and written in one transaction, as the dispatcher does).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Koa from 'koa';
import PQueue from 'p-queue';
import getRawBody from 'raw-body';
import { Pool } from 'undici';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { createTickTransaction, openDatabase } from '../../src/store/db.js';
import { createMessagesRepo } from '../../src/store/messages.js';
import { createOutboxRepo, type DeliveryOutcome } from '../../src/store/outbox.js';
import { createSessionsRepo } from '../../src/store/sessions.js';
import { createWebhooksRepo } from '../../src/store/webhooks.js';
import { envelopeJson } from '../../src/webhooks/outbox.js';
import { signedPost } from './signed-post.js';

const webhook = process.env.WEBHOOK_URL ? new URL(process.env.WEBHOOK_URL) : undefined;
const inFlight = Number(process.env.IN_FLIGHT ?? 16);
const pool = webhook && new Pool(webhook.origin, { connections: inFlight });
const deliveries = new PQueue({ concurrency: inFlight });
/** how long outcomes are gathered before one transaction writes them: the dispatcher's default flushIntervalMs */
const OUTCOME_FLUSH_MS = 10;
const durable = webhook && process.env.DURABLE_DIR ? durableStore(process.env.DURABLE_DIR, webhook.href) : undefined;

function durableStore(dir: string, url: string) {
  const db = openDatabase(join(dir, 'gateway.db'));
  const box = createSecretBox(Buffer.alloc(32, 7));
  createSessionsRepo(db, box).insert({ name: 'bench', engine: 'sandbox', config: {} });
  const webhookId = createWebhooksRepo(db, box).insert({ url, events: ['message.sent'], session: null, enabled: true, headers: [], retries: { attempts: 3, delaySeconds: 5, policy: 'exponential' }, hmacKey: 'bench', signatureScheme: 'body' }).id;
  const tick = createTickTransaction(db, (err) => {
    process.stderr.write(`bare-koa: a tick's writes were lost: ${String(err)}\n`);
    process.exit(1);
  });
  const messages = createMessagesRepo(db);
  const outbox = createOutboxRepo(db);
  let outcomes: DeliveryOutcome[] = [];
  const flushOutcomes = () => {
    tick.join();
    outbox.recordOutcomes(outcomes);
    outcomes = [];
  };
  return {
    /** the sent message's row and its delivery row, in the tick's transaction; settles once committed */
    record(chatId: string, body: string, deliveryId: string, eventId: string): Promise<void> | undefined {
      tick.join();
      const now = Date.now();
      messages.insert({ session: 'bench', chatId, id: randomUUID(), sender: null, fromMe: true, type: 'text', text: body, mediaId: null, quotedId: null, status: 'sent', secret: null, extra: null, raw: null, timestamp: now });
      outbox.recordEvent([{ id: deliveryId, webhookId, eventId, event: 'message.sent', session: 'bench', body }], now);
      return tick.committed();
    },
    succeeded(id: string): void {
      if (outcomes.length === 0) setTimeout(flushOutcomes, OUTCOME_FLUSH_MS);
      outcomes.push({ id, status: 'succeeded', attempts: 1, budgetStart: 0, nextAttemptAt: null, lastStatusCode: 200, lastError: null, at: Date.now() });
    },
  };
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST') return;
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: 1024 * 1024 })) as { chatId?: string; text?: string };
  const data = { messageId: 'BARE', status: 'sent', chatId: body.chatId, timestamp: new Date().toISOString() };
  if (pool) {
    const event = { id: randomUUID(), event: 'message.sent' as const, session: 'bench', timestamp: data.timestamp, payload: { ...body, ...data } };
    const deliveryId = randomUUID();
    const envelope = envelopeJson(deliveryId, event);
    const committed = durable?.record(String(body.chatId), envelope, deliveryId, event.id);
    deliveries
      .add(async () => {
        await committed;
        await signedPost(pool, webhook!.pathname, envelope, event.event);
        durable?.succeeded(deliveryId);
      })
      .catch((err: unknown) => {
        process.stderr.write(`bare-koa: a webhook POST failed: ${String(err)}\n`);
        process.exit(1);
      });
    await committed;
  }
  ctx.body = { data };
});
const server = createServer(app.callback());
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
