// The send benchmark's baselines, run as a child process: a bare Koa route that reads and parses the same JSON body and
// answers. With WEBHOOK_URL set it also POSTs one signed envelope per request to that receiver, at most IN_FLIGHT at a
// time like one webhook of the daemon: the least work any gateway that reports its sends to a webhook can do.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import PQueue from 'p-queue';
import getRawBody from 'raw-body';
import { Pool } from 'undici';
import { envelopeJson } from '../../src/webhooks/outbox.js';
import { signedPost } from './signed-post.js';

const webhook = process.env.WEBHOOK_URL ? new URL(process.env.WEBHOOK_URL) : undefined;
const inFlight = Number(process.env.IN_FLIGHT ?? 16);
const pool = webhook && new Pool(webhook.origin, { connections: inFlight });
const deliveries = new PQueue({ concurrency: inFlight });

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST') return;
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: 1024 * 1024 })) as { chatId?: string };
  const data = { messageId: 'BARE', status: 'sent', chatId: body.chatId, timestamp: new Date().toISOString() };
  if (pool) {
    const event = { id: randomUUID(), event: 'message.sent' as const, session: 'bench', timestamp: data.timestamp, payload: { ...body, ...data } };
    deliveries.add(() => signedPost(pool, webhook!.pathname, envelopeJson(randomUUID(), event), event.event)).catch((err: unknown) => {
      process.stderr.write(`bare-koa: a webhook POST failed: ${String(err)}\n`);
      process.exit(1);
    });
  }
  ctx.body = { data };
});
const server = createServer(app.callback());
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
