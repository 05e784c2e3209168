// The send benchmark's baseline: a bare Koa route that reads and parses the same JSON body and answers. Run as a child process.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import getRawBody from 'raw-body';

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST') return;
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: 1024 * 1024 })) as { chatId?: string };
  ctx.body = { data: { messageId: 'BARE', status: 'sent', chatId: body.chatId, timestamp: new Date().toISOString() } };
});
const server = createServer(app.callback());
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
