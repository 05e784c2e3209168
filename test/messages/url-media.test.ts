import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { selfSignedCertificate } from '../helpers/tls.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const BIG = 60 * 1024 * 1024;
/** MEDIA_URL_MAX_BYTES of src/messages/content.ts */
const LIMIT = 50 * 1024 * 1024;

let daemon: TestDaemon;
let events: EventCollector;
let server: Server;
let base: string;
let certFile: string;
/** bytes the media server managed to write per path before the client went away */
const written = new Map<string, number>();
/** every path the HTTPS media server was asked for */
const hits: string[] = [];

before(async () => {
  const tls = selfSignedCertificate();
  certFile = tls.certFile;
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    if (path === '/pixel.png' || path.startsWith('/any-name/')) {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': PNG.length });
      res.end(PNG);
    } else if (path === '/missing.png') {
      res.writeHead(404).end();
    } else if (path === '/redirect.png') {
      res.writeHead(302, { Location: `${base}/pixel.png` }).end();
    } else if (path === '/exact-limit.bin' || path === '/limit-plus-one.bin') {
      const size = path === '/exact-limit.bin' ? LIMIT : LIMIT + 1;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size });
      res.end(Buffer.alloc(size, 3));
    } else if (path === '/big-declared.bin' || path === '/big-chunked.bin') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', ...(path === '/big-declared.bin' ? { 'Content-Length': BIG } : {}) });
      const chunk = Buffer.alloc(256 * 1024, 7);
      let sent = 0;
      const pump = () => {
        while (sent < BIG) {
          sent += chunk.length;
          written.set(path, sent);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => written.set(path, Math.min(sent, written.get(path) ?? 0)));
      pump();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: tls.certFile } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', '+15550110001');
  await pairedSession(daemon, 'b', '+15550110002');
});

after(async () => {
  events.close();
  await daemon.cleanup();
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const send = (body: Record<string, unknown>) => daemon.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550110002', ...body });

test('an image by HTTPS URL is downloaded by the gateway and arrives byte for byte', async () => {
  const res = await send({ type: 'image', url: `${base}/pixel.png`, caption: 'from a url' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId);
  assert.equal(received.payload.mimeType, 'image/png');
  assert.equal(received.payload.size, PNG.length);
});

test('a URL answering 404, or redirecting, is a 400 that names /url', async () => {
  for (const path of ['/missing.png', '/redirect.png']) {
    const res = await send({ type: 'image', url: `${base}${path}` });
    assert.equal(res.status, 400, path);
    assert.equal(res.body.error.code, 'MEDIA_DOWNLOAD_FAILED');
    assert.equal(res.body.error.details[0].path, '/url');
  }
});

test('a URL whose file name has malformed percent-encoding is a 400 naming /url, not a 500, and is not fetched', async () => {
  for (const name of ['pixel%E0%A4%A.png', 'pixel%zz.png', '%']) {
    const res = await send({ type: 'image', url: `${base}/any-name/${name}` });
    assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'VALIDATION_FAILED');
    assert.deepEqual(res.body.error.details, [{ path: '/url', message: 'has malformed percent-encoding in its path' }]);
    assert.ok(!hits.some((h) => h.endsWith(name)), `${name} was fetched`);
  }
  const named = await send({ type: 'image', url: `${base}/any-name/my%20picture%C3%A9.png` });
  assert.equal(named.status, 200, JSON.stringify(named.body));
  await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === named.body.data.messageId);
});

test('media over 50 MB is refused without being downloaded in full (declared and chunked)', async () => {
  for (const path of ['/big-declared.bin', '/big-chunked.bin']) {
    const res = await send({ type: 'file', filename: 'big.bin', url: `${base}${path}` });
    assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'VALIDATION_FAILED');
    assert.equal(res.body.error.details[0].path, '/url');
    assert.match(res.body.error.message, /larger than 50 MB/);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok((written.get(path) ?? 0) < BIG, `${path}: the server wrote ${written.get(path)} of ${BIG} bytes`);
  }
});

test('media of exactly 50 MB passes and arrives whole; one byte more is refused', async () => {
  const res = await send({ type: 'file', filename: 'exact.bin', url: `${base}/exact-limit.bin` });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.match(res.body.data.mediaId, /^[0-9a-f-]{36}$/);
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId, 15000);
  assert.equal(received.payload.type, 'file');
  assert.equal(received.payload.size, LIMIT);
  const over = await send({ type: 'file', filename: 'over.bin', url: `${base}/limit-plus-one.bin` });
  assert.equal(over.status, 400, JSON.stringify(over.body));
  assert.equal(over.body.error.details[0].path, '/url');
});

test('the default URL policy (no private targets): http:// and loopback https:// URLs are 400 MEDIA_URL_REJECTED, nothing fetched', async () => {
  const httpHits: string[] = [];
  const plain = createHttpServer((req, res) => {
    httpHits.push(req.url ?? '/');
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
  });
  await new Promise<void>((done) => plain.listen(0, '127.0.0.1', done));
  const plainBase = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  const strict = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_MEDIA_ALLOW_PRIVATE_URLS: 'false', NODE_EXTRA_CA_CERTS: certFile } });
  try {
    await pairedSession(strict, 'a', '+15550110001');
    const port = new URL(base).port;
    const before = hits.length;
    for (const url of [`${plainBase}/pixel.png`, `${base}/pixel.png`, `https://localhost:${port}/pixel.png`, `https://[::1]:${port}/pixel.png`]) {
      const res = await strict.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550110002', type: 'image', url });
      assert.equal(res.status, 400, `${url}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'MEDIA_URL_REJECTED', url);
      assert.equal(res.body.error.details[0].path, '/url', url);
    }
    assert.deepEqual(httpHits, []);
    assert.deepEqual(hits.slice(before), []);
  } finally {
    await strict.cleanup();
    plain.closeAllConnections();
    await new Promise((done) => plain.close(done));
  }
});
