// The send benchmark's baselines, run as a child process: a bare Koa route that reads and parses the same JSON body and
// answers. With WEBHOOK_URL set it also POSTs one signed envelope per request to that receiver, at most IN_FLIGHT at a
// time like one webhook of the daemon: the least work any gateway that reports its sends to a webhook can do.
// With DURABLE=1 as well it also does the least a durable gateway must write (./durable-outbox.ts): the sent message's
// row and the event's delivery row committed before the answer, the POST's outcome recorded afterwards.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import PQueue from 'p-queue';
import getRawBody from 'raw-body';
import { Pool } from 'undici';
import { envelopeJson } from '../../src/webhooks/outbox.js';
import { durableOutbox } from './durable-outbox.js';
import { signedPost } from './signed-post.js';

const webhook = process.env.WEBHOOK_URL ? new URL(process.env.WEBHOOK_URL) : undefined;
const inFlight = Number(process.env.IN_FLIGHT ?? 16);
const pool = webhook && new Pool(webhook.origin, { connections: inFlight });
const deliveries = new PQueue({ concurrency: inFlight });
const durable = webhook && process.env.DURABLE === '1'
  ? await durableOutbox((err) => {
      process.stderr.write(`bare-koa: a tick's writes were lost: ${String(err)}\n`);
      process.exit(1);
    })
  : undefined;

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST') return;
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: 1024 * 1024 })) as { chatId?: string; text?: string };
  const data = { messageId: 'BARE', status: 'sent', chatId: body.chatId, timestamp: new Date().toISOString() };
  if (pool) {
    const event = { id: randomUUID(), event: 'message.sent' as const, session: 'bench', seq: 0, timestamp: data.timestamp, payload: { ...body, ...data } };
    const deliveryId = randomUUID();
    const envelope = envelopeJson(deliveryId, event);
    const committed = durable?.record(deliveryId, event.event, envelope, { chatId: String(body.chatId), text: String(body.text) });
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
process.on('SIGTERM', () =>
  server.close(() => {
    void (durable?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  }),
);
