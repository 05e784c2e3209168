// Tests for src/webhooks/http-delivery.ts against local servers on 127.0.0.1: outcomes, redirects, timeouts, refusals.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postDelivery } from '../../src/webhooks/http-delivery.js';
import { createGuardedDispatcher } from '../../src/net/guarded-dispatcher.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface TestServer {
  server: http.Server;
  base: string;
  received: Received[];
  connections: () => number;
  close: () => Promise<void>;
}

async function startServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<TestServer> {
  const received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      handler(req, res);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    base: `http://127.0.0.1:${port}`,
    received,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const dispatcher = createGuardedDispatcher({ allowPrivateTargets: true }, { connectTimeoutMs: 2000 });
let srv: TestServer;
let redirectTarget: TestServer;

before(async () => {
  redirectTarget = await startServer((_req, res) => res.end('should never be reached'));
  srv = await startServer((req, res) => {
    const path = req.url ?? '/';
    const status = /^\/status\/(\d{3})$/.exec(path);
    if (status) {
      res.statusCode = Number(status[1]);
      res.end(res.statusCode === 204 ? undefined : `status ${status[1]}`);
      return;
    }
    if (path === '/redirect') {
      res.writeHead(302, { location: `${redirectTarget.base}/stolen` });
      res.end();
      return;
    }
    if (path === '/hang') return; // never answers
    if (path === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial'); // never ends the body
      return;
    }
    if (path === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(512 * 1024, 0x61));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"received":true}');
  });
});

after(async () => {
  await dispatcher.close();
  await srv.close();
  await redirectTarget.close();
});

const body = Buffer.from(JSON.stringify({ id: 'dlv_1', event: 'message.received', payload: { text: 'hi ✓' } }));

test('2xx is ok; method, exact body bytes and headers arrive as given', async () => {
  const before = srv.received.length;
  const headers = {
    'content-type': 'application/json',
    'x-webhook-signature': 'abc123',
    'x-webhook-id': 'dlv_1',
    'x-custom': 'Value With Case',
  };
  const out = await postDelivery(dispatcher, { url: `${srv.base}/hook`, body, headers, timeoutMs: 2000 });
  assert.equal(out.ok, true);
  assert.equal(out.statusCode, 200);
  assert.equal(out.error, undefined);
  assert.ok(out.durationMs >= 0 && Number.isFinite(out.durationMs));
  const got = srv.received[before];
  assert.ok(got);
  assert.equal(got.method, 'POST');
  assert.equal(got.url, '/hook');
  assert.deepEqual(got.body, body);
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.headers['x-webhook-signature'], 'abc123');
  assert.equal(got.headers['x-webhook-id'], 'dlv_1');
  assert.equal(got.headers['x-custom'], 'Value With Case');
  assert.equal(got.headers['content-length'], String(body.length));
});

test('204 and 201 are ok', async () => {
  for (const code of [201, 204]) {
    const out = await postDelivery(dispatcher, { url: `${srv.base}/status/${code}`, body, headers: {}, timeoutMs: 2000 });
    assert.deepEqual({ ok: out.ok, statusCode: out.statusCode }, { ok: true, statusCode: code });
  }
});

test('4xx and 5xx are failures carrying the status', async () => {
  for (const code of [400, 401, 404, 410, 429, 500, 502, 503]) {
    const out = await postDelivery(dispatcher, { url: `${srv.base}/status/${code}`, body, headers: {}, timeoutMs: 2000 });
    assert.equal(out.ok, false, `status ${code}`);
    assert.equal(out.statusCode, code);
    assert.equal(out.error, `HTTP ${code}`);
  }
});

test('a 302 to 127.0.0.1 is not followed', async () => {
  const out = await postDelivery(dispatcher, { url: `${srv.base}/redirect`, body, headers: {}, timeoutMs: 2000 });
  assert.equal(out.ok, false);
  assert.equal(out.statusCode, 302);
  assert.match(out.error ?? '', /redirect/i);
  assert.equal(redirectTarget.received.length, 0);
  assert.equal(redirectTarget.connections(), 0);
});

test('a server that never answers times out within timeoutMs', async () => {
  const started = Date.now();
  const out = await postDelivery(dispatcher, { url: `${srv.base}/hang`, body, headers: {}, timeoutMs: 300 });
  const took = Date.now() - started;
  assert.equal(out.ok, false);
  assert.equal(out.statusCode, undefined);
  assert.match(out.error ?? '', /timed out after 300 ms/);
  assert.ok(took >= 250 && took < 3000, `took ${took} ms`);
});

test('a 200 whose body never ends still counts as delivered, bounded by timeoutMs', async () => {
  const started = Date.now();
  const out = await postDelivery(dispatcher, { url: `${srv.base}/slow-body`, body, headers: {}, timeoutMs: 300 });
  assert.equal(out.ok, true);
  assert.equal(out.statusCode, 200);
  assert.ok(Date.now() - started < 3000);
});

test('a large response body does not break the outcome', async () => {
  const out = await postDelivery(dispatcher, { url: `${srv.base}/big`, body, headers: {}, timeoutMs: 2000 });
  assert.deepEqual({ ok: out.ok, statusCode: out.statusCode }, { ok: true, statusCode: 200 });
});

test('connection refused becomes an error outcome, never a throw', async () => {
  const closed = await startServer((_req, res) => res.end());
  const url = `${closed.base}/hook`;
  await closed.close();
  const out = await postDelivery(dispatcher, { url, body, headers: {}, timeoutMs: 2000 });
  assert.equal(out.ok, false);
  assert.equal(out.statusCode, undefined);
  assert.match(out.error ?? '', /ECONNREFUSED/);
});

test('an invalid URL becomes an error outcome, never a throw', async () => {
  const out = await postDelivery(dispatcher, { url: 'not a url', body, headers: {}, timeoutMs: 2000 });
  assert.equal(out.ok, false);
  assert.ok((out.error ?? '').length > 0);
});

test('sequential deliveries reuse one connection (response bodies are consumed)', async () => {
  const reuse = await startServer((_req, res) => res.end('x'.repeat(1000)));
  const agent = createGuardedDispatcher({ allowPrivateTargets: true }, { connections: 1 });
  try {
    for (let i = 0; i < 5; i += 1) {
      const out = await postDelivery(agent, { url: `${reuse.base}/hook`, body, headers: {}, timeoutMs: 2000 });
      assert.equal(out.ok, true);
    }
    assert.equal(reuse.received.length, 5);
    assert.equal(reuse.connections(), 1);
  } finally {
    await agent.close();
    await reuse.close();
  }
});

test('a guard refusal becomes an error outcome', async () => {
  const strict = createGuardedDispatcher({ allowPrivateTargets: false });
  try {
    const out = await postDelivery(strict, { url: `${srv.base.replace('http:', 'https:')}/hook`, body, headers: {}, timeoutMs: 2000 });
    assert.equal(out.ok, false);
    assert.match(out.error ?? '', /blocked address/);
  } finally {
    await strict.close();
  }
});
