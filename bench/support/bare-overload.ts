// The overload benchmark's baseline, run as a child process: the least any server must do under the same flood. A bare
// Koa app with GET /api/health (a tiny JSON) and POST /api/messages/send, which checks the bearer against BARE_KEY in
// constant time (SHA-256 of both, then timingSafeEqual), answers 401 without one (its body read and discarded, as the
// daemon does, so that the client reads the answer), and otherwise parses the JSON body and refuses it: 429 with
// Retry-After, what the daemon answers a rate-limited key.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import getRawBody from 'raw-body';

const keyDigest = createHash('sha256').update(process.env.BARE_KEY ?? '').digest();

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/api/health') {
    ctx.body = { data: { status: 'ok' } };
    return;
  }
  if (ctx.method !== 'POST' || ctx.path !== '/api/messages/send') {
    ctx.status = 404;
    ctx.body = { error: { code: 'NOT_FOUND', message: 'no such route' } };
    return;
  }
  const header = ctx.get('authorization');
  const bearer = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (!timingSafeEqual(createHash('sha256').update(bearer).digest(), keyDigest)) {
    ctx.req.resume(); // read and discard the unread body
    ctx.status = 401;
    ctx.body = { error: { code: 'UNAUTHORIZED', message: 'a valid bearer is required' } };
    return;
  }
  JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: 1024 * 1024 }));
  ctx.status = 429;
  ctx.set('Retry-After', '60');
  ctx.body = { error: { code: 'RATE_LIMITED', message: 'this key is over its rate limit' } };
});
const server = createServer(app.callback());
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
