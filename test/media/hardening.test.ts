// Issue 16, media and messages: each case failed (or hung) before its fix.
import assert from 'node:assert/strict';
import { openDaemonDb } from '../helpers/daemon-db.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const A = '+15550160001';
const B = '+15550160002';

/** a loopback media server whose /slow answers wait until released */
interface SlowServer {
  base: string;
  hits: string[];
  held: ServerResponse[];
  release(): void;
  close(): Promise<void>;
}

async function slowServer(): Promise<SlowServer> {
  const hits: string[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    hits.push(req.url ?? '');
    if (req.url?.startsWith('/slow')) return void held.push(res);
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    held,
    release() {
      for (const res of held.splice(0)) res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

describe('one daemon with small limits', () => {
  let daemon: TestDaemon;
  let events: EventCollector;
  let media: SlowServer;
  let s3: TestS3;

  before(async () => {
    media = await slowServer();
    s3 = await startS3();
    daemon = await startDaemon({
      env: { GATEWAY_LOG_LEVEL: 'warn' },
      config: [
        'media:',
        '  urlFetchConcurrency: 1',
        '  urlFetchQueue: 1',
        '  s3ConnectTimeoutMs: 500',
        '  s3RequestTimeoutMs: 500',
        '  autoPersistTimeoutMs: 3000',
        'messages:',
        '  asyncMaxQueuedBytes: 1048576',
        '',
      ].join('\n'),
    });
    events = await collectEvents(daemon);
    await pairedSession(daemon, 'a', A);
    await pairedSession(daemon, 'b', B);
  });

  after(async () => {
    events?.close();
    await daemon?.cleanup();
    await media?.close();
    await s3?.close();
  });

  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, ...body }, undefined, headers);

  test('base64 of a million newlines and one bad character: 400 at once for sends and pictures, the daemon stays responsive', async () => {
    const evil = `${'\n'.repeat(1_000_000)}!`;
    const sent = await send({ type: 'image', base64: evil });
    assert.equal(sent.status, 400, JSON.stringify(sent.body));
    assert.equal(sent.body.error.code, 'VALIDATION_FAILED');
    assert.equal(sent.body.error.details[0].path, '/base64');
    const group = await daemon.request('POST', '/api/sessions/a/groups', { session: 'a', name: 'g', participants: [B] });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    const picture = await daemon.request('PUT', `/api/sessions/a/groups/${group.body.data.id}/picture`, { base64: evil });
    assert.equal(picture.status, 400, JSON.stringify(picture.body));
    assert.equal(picture.body.error.details[0].path, '/base64');
    assert.equal((await daemon.request('GET', '/api/health')).status, 200);
    // valid base64 with line breaks still passes
    const wrapped = PNG.toString('base64').replace(/.{20}/g, '$&\r\n');
    assert.equal((await send({ type: 'image', base64: wrapped })).status, 200);
  });

  test('mimeType must be a bare type (optional parameters): a header injection is a 400', async () => {
    for (const mimeType of ['text/plain\r\nSet-Cookie: x=1', 'text/plain\nx', 'text/plain x', '/plain', 'text/']) {
      const res = await send({ type: 'file', filename: 'a.txt', base64: Buffer.from('hello').toString('base64'), mimeType });
      assert.equal(res.status, 400, `${JSON.stringify(mimeType)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.equal(res.body.error.details[0].path, '/mimeType');
    }
    const ok = await send({ type: 'file', filename: 'a.txt', base64: Buffer.from('hello').toString('base64'), mimeType: 'text/plain; charset=utf-8' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('a bad type already stored is served as application/octet-stream, not a 500', async () => {
    const sent = await send({ type: 'file', filename: 'b.txt', base64: Buffer.from('stored').toString('base64'), mimeType: 'text/plain' });
    assert.equal(sent.status, 200);
    const db = openDaemonDb(daemon.dataDir);
    try {
      await db.prepare('UPDATE media SET mime_type = ? WHERE id = ?').run('text/plain\r\nSet-Cookie: x=1', sent.body.data.mediaId);
    } finally {
      await db.close();
    }
    const res = await fetch(`${daemon.url}/api/sessions/a/media/${sent.body.data.mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${daemon.masterKey}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    assert.equal(res.headers.get('set-cookie'), null);
    assert.equal(await res.text(), 'stored');
  });

  test('URL media downloads are capped daemon-wide: one runs, one waits, the next is 503 SERVER_BUSY with Retry-After', async () => {
    const first = send({ type: 'image', url: `${media.base}/slow-1.png` });
    await waitFor(() => media.held.length === 1, 5000, 'the first download to start');
    const second = send({ type: 'image', url: `${media.base}/slow-2.png` });
    await new Promise((r) => setTimeout(r, 200));
    const third = await send({ type: 'image', url: `${media.base}/slow-3.png` });
    assert.equal(third.status, 503, JSON.stringify(third.body));
    assert.equal(third.body.error.code, 'SERVER_BUSY');
    assert.ok(Number(third.headers.get('retry-after')) >= 1);
    assert.ok(!media.hits.includes('/slow-3.png'), 'the refused one was never fetched');
    media.release();
    await waitFor(() => media.held.length === 1, 5000, 'the queued download to start');
    media.release();
    assert.equal((await first).status, 200);
    assert.equal((await second).status, 200);
  });

  test('accepted async sends have a byte budget: past it 503 SERVER_BUSY with Retry-After; freed when they finish', async () => {
    const async = { Prefer: 'respond-async' };
    const first = await send({ type: 'image', url: `${media.base}/slow-async.png` }, async);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const second = await send({ type: 'image', base64: PNG.toString('base64') }, async);
    assert.equal(second.status, 503, JSON.stringify(second.body));
    assert.equal(second.body.error.code, 'SERVER_BUSY');
    assert.ok(Number(second.headers.get('retry-after')) >= 1);
    await waitFor(() => media.held.length === 1, 5000, 'the async download to start');
    media.release();
    const result = await events.next((e) => e.event === 'command.result' && e.payload.commandId === first.body.data.commandId, 10_000);
    assert.equal(result.payload.success, true, JSON.stringify(result.payload));
    assert.equal((await send({ type: 'image', base64: PNG.toString('base64') }, async)).status, 202);
  });

  test('persisting a file already in the bucket answers with the stored object instead of uploading it again', async () => {
    assert.equal((await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings })).status, 200);
    try {
      const inbound = await daemon.request('POST', '/api/sandbox/sessions/b/inbound', { from: '+15550160777', type: 'image', base64: PNG.toString('base64') });
      const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === inbound.body.data.messageId);
      const first = await daemon.request('POST', `/api/sessions/b/media/${got.payload.mediaId}/persist`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: first.body.data.key, Body: 'marker' }));
      const again = await daemon.request('POST', `/api/sessions/b/media/${got.payload.mediaId}/persist`);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.data.key, first.body.data.key);
      const object = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: first.body.data.key }));
      assert.equal(await object.Body!.transformToString(), 'marker', 'the object was uploaded again');
    } finally {
      await daemon.request('PUT', '/api/admin/settings', { s3: null, autoPersist: false });
    }
  });

  test('auto-persist to an S3 endpoint that never answers: the image event goes out without mediaUrl, later events still arrive', async () => {
    const sockets = new Set<Socket>();
    const blackhole: TcpServer = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((done) => blackhole.listen(0, '127.0.0.1', done));
    const endpoint = `http://127.0.0.1:${(blackhole.address() as AddressInfo).port}`;
    try {
      const set = await daemon.request('PUT', '/api/admin/settings', { s3: { ...s3.settings, endpoint }, autoPersist: true });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const image = await daemon.request('POST', '/api/sandbox/sessions/b/inbound', { from: '+15550160888', type: 'image', base64: PNG.toString('base64') });
      const text = await daemon.request('POST', '/api/sandbox/sessions/b/inbound', { from: '+15550160888', type: 'text', text: 'after the image' });
      const gotImage = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === image.body.data.messageId, 30_000, 'the image');
      assert.equal(gotImage.payload.mediaUrl, undefined);
      await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === text.body.data.messageId, 10_000, 'the text after it');
      assert.ok(sockets.size >= 1, 'the upload did reach the endpoint');
    } finally {
      await daemon.request('PUT', '/api/admin/settings', { s3: null, autoPersist: false });
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => blackhole.close(() => done()));
    }
  });
});

describe('private targets: media URLs and the S3 endpoint have their own opt-ins', () => {
  let strict: TestDaemon;
  let open: TestDaemon;
  let media: SlowServer;

  before(async () => {
    media = await slowServer();
    // webhooks may reach loopback; media URLs and the S3 endpoint may not
    strict = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', GATEWAY_MEDIA_ALLOW_PRIVATE_URLS: 'false', GATEWAY_S3_ALLOW_PRIVATE_ENDPOINT: 'false' } });
    open = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_MEDIA_ALLOW_PRIVATE_URLS: 'true' } });
    for (const daemon of [strict, open]) {
      await pairedSession(daemon, 'a', A);
      await pairedSession(daemon, 'b', B);
    }
  });

  after(async () => {
    await strict?.cleanup();
    await open?.cleanup();
    await media?.close();
  });

  test('webhooks.allowPrivateTargets no longer opens media URLs', async () => {
    const res = await strict.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'image', url: `${media.base}/pixel.png` });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'MEDIA_URL_REJECTED');
    assert.deepEqual(media.hits, []);
  });

  test('media.allowPrivateUrls opens them to API keys, never to client tokens', async () => {
    const byKey = await open.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'image', url: `${media.base}/pixel.png` });
    assert.equal(byKey.status, 200, JSON.stringify(byKey.body));
    assert.equal(media.hits.length, 1);
    const rules = await open.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_message' });
    assert.equal(rules.status, 200, JSON.stringify(rules.body));
    const minted = await open.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor' });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const byToken = await open.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'image', url: `${media.base}/pixel.png?token` }, minted.body.data.token);
    assert.equal(byToken.status, 400, JSON.stringify(byToken.body));
    assert.equal(byToken.body.error.code, 'MEDIA_URL_REJECTED');
    assert.equal(media.hits.length, 1, 'the client token made the daemon fetch a loopback URL');
  });

  test('an S3 endpoint on a private or loopback address is refused without media.s3AllowPrivateEndpoint', async () => {
    const s3 = { region: 'us-east-1', bucket: 'media', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true };
    for (const endpoint of ['http://127.0.0.1:9000', 'https://169.254.169.254', 'https://10.0.0.5', 'https://localhost:9000', 'http://s3.example.com']) {
      const res = await strict.request('PUT', '/api/admin/settings', { s3: { ...s3, endpoint } });
      assert.equal(res.status, 400, `${endpoint}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.equal(res.body.error.details[0].path, '/s3/endpoint');
    }
    assert.equal((await strict.request('PUT', '/api/admin/settings', { s3: { ...s3, endpoint: 'https://s3.example.com' } })).status, 200);
    assert.equal((await open.request('PUT', '/api/admin/settings', { s3: { ...s3, endpoint: 'http://127.0.0.1:9000' } })).status, 200);
  });
});
