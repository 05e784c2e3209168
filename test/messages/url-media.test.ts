import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { selfSignedCertificate } from '../helpers/tls.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const BIG = 60 * 1024 * 1024;

let daemon: TestDaemon;
let events: EventCollector;
let server: Server;
let base: string;
/** bytes the media server managed to write per path before the client went away */
const written = new Map<string, number>();

before(async () => {
  const tls = selfSignedCertificate();
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = req.url ?? '/';
    if (path === '/pixel.png') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': PNG.length });
      res.end(PNG);
    } else if (path === '/missing.png') {
      res.writeHead(404).end();
    } else if (path === '/redirect.png') {
      res.writeHead(302, { Location: `${base}/pixel.png` }).end();
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
