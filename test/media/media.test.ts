import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GatewayError, NetworkError } from '../../src/errors.js';
import { errorStatus } from '../../src/http/error-status.js';
import { MediaService } from '../../src/media/service.js';
import { DEFAULT_S3_CONNECTION } from '../../src/media/s3.js';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { selfSignedCertificate } from '../helpers/tls.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const BIG = 50 * 1024 * 1024;

let daemon: TestDaemon;
let events: EventCollector;
let s3: TestS3;
let files: Server;
let filesUrl: string;
/** B's record of the 50 MB file, set by the streaming test and persisted by the multipart test */
let bigMediaId: string | undefined;

before(async () => {
  const tls = selfSignedCertificate();
  files = createServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': BIG });
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    let sent = 0;
    const pump = () => {
      while (sent < BIG) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((done) => files.listen(0, '127.0.0.1', done));
  filesUrl = `https://127.0.0.1:${(files.address() as AddressInfo).port}`;
  s3 = await startS3();
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: tls.certFile } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', '+15550400001');
  await pairedSession(daemon, 'b', '+15550400002');
});

after(async () => {
  events.close();
  await daemon.cleanup();
  await s3.close();
  files.closeAllConnections();
  await new Promise((done) => files.close(done));
});

/** A sends B an image; returns B's media id. */
async function receivedImage(caption = 'pic'): Promise<{ mediaId: string; messageId: string; payload: any }> {
  const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550400002', type: 'image', base64: PNG.toString('base64'), caption });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === sent.body.data.messageId);
  return { mediaId: got.payload.mediaId, messageId: got.payload.messageId, payload: got.payload };
}

async function bodyBytes(body: any): Promise<Buffer> {
  return Buffer.from(await body.transformToByteArray());
}

describe('records and download', () => {
  test('GET the record; download streams the bytes with type, length and filename', async () => {
    const { mediaId, messageId } = await receivedImage();
    const record = await daemon.request('GET', `/api/sessions/b/media/${mediaId}`);
    assert.equal(record.status, 200);
    assert.deepEqual(
      { ...record.body.data, createdAt: undefined },
      { id: mediaId, messageId, session: 'b', mimeType: 'image/png', size: PNG.length, persisted: false, createdAt: undefined },
    );
    const download = await fetch(`${daemon.url}/api/sessions/b/media/${mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${daemon.masterKey}` } });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'image/png');
    assert.equal(download.headers.get('content-length'), String(PNG.length));
    assert.match(download.headers.get('content-disposition') ?? '', new RegExp(`attachment; filename="${mediaId}.png"`));
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), PNG);
  });

  test('unknown media, media of another session, malformed ids', async () => {
    const { mediaId } = await receivedImage();
    assert.equal((await daemon.request('GET', `/api/sessions/a/media/${mediaId}`)).body.error.code, 'MEDIA_NOT_FOUND');
    assert.equal((await daemon.request('GET', '/api/sessions/b/media/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await daemon.request('GET', '/api/sessions/b/media/not-a-uuid')).status, 400);
  });

  test('a 50 MB file streams with the daemon\'s memory growing far less than the file', async () => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550400002', type: 'file', filename: 'big.bin', url: `${filesUrl}/big.bin` });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === sent.body.data.messageId, 15000);
    bigMediaId = got.payload.mediaId;
    const rss = async () => Number(/gateway_process_resident_memory_bytes (\d+)/.exec((await daemon.request('GET', '/metrics')).body)![1]);
    await new Promise((r) => setTimeout(r, 500));
    const before = await rss();
    const download = await fetch(`${daemon.url}/api/sessions/b/media/${got.payload.mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${daemon.masterKey}` } });
    let received = 0;
    let peak = before;
    let chunks = 0;
    for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) {
      received += chunk.length;
      if (++chunks % 64 === 0) peak = Math.max(peak, await rss());
    }
    peak = Math.max(peak, await rss());
    assert.equal(received, BIG);
    const growth = peak - before;
    // a download held in memory grows RSS by the whole file at least; a streamed one by its socket buffers and what GC
    // has not yet returned (4–16 MB across runs here), so half the file separates the two without reading GC timing
    assert.ok(growth < BIG / 2, `RSS grew ${Math.round(growth / 1024 / 1024)} MB while streaming a 50 MB file`);
  });
});

describe('S3 persistence', () => {
  test('without settings: 409 S3_NOT_CONFIGURED, nothing marked persisted', async () => {
    const { mediaId } = await receivedImage();
    const res = await daemon.request('POST', `/api/sessions/b/media/${mediaId}/persist`);
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'S3_NOT_CONFIGURED');
    assert.equal((await daemon.request('GET', `/api/sessions/b/media/${mediaId}`)).body.data.persisted, false);
  });

  test('wrong credentials: 502 with a generic message (S3\'s own words only in the log), no object in the bucket, record stays unpersisted', async () => {
    await daemon.request('PUT', '/api/admin/settings', { s3: { ...s3.settings, accessKeyId: 'WRONG', secretAccessKey: 'WRONG' } });
    const { mediaId } = await receivedImage();
    const res = await daemon.request('POST', `/api/sessions/b/media/${mediaId}/persist`);
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'S3_ERROR');
    // s3rver's own error (it names the access key's problem) stays in the daemon's log
    assert.equal(res.body.error.message, 'the S3 storage failed the upload (the daemon log has the detail)');
    assert.doesNotMatch(JSON.stringify(res.body), /InvalidAccessKeyId|AWS Access Key/);
    await waitFor(() => /InvalidAccessKeyId/.test(daemon.output()), 5000, 'the S3 detail in the log');
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'media', Prefix: 'gw/b/' }));
    assert.equal((listed.Contents ?? []).filter((o) => o.Key?.includes(mediaId)).length, 0, JSON.stringify(listed.Contents));
    const record = (await daemon.request('GET', `/api/sessions/b/media/${mediaId}`)).body.data;
    assert.equal(record.persisted, false);
    assert.equal(record.s3Url, undefined);
  });

  test('settings: the secret is never returned; validation', async () => {
    const secret = 'sekrit-9f3b7c1e-NEVER-ECHO-4d2a';
    const raw = async (method: string, body?: unknown) => {
      const res = await fetch(`${daemon.url}/api/admin/settings`, {
        method,
        headers: { Authorization: `Bearer ${daemon.masterKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, text: await res.text() };
    };
    const put = await raw('PUT', { s3: { ...s3.settings, secretAccessKey: secret } });
    assert.equal(put.status, 200, put.text);
    assert.ok(!put.text.includes(secret), put.text);
    assert.ok(!put.text.includes('secretAccessKey"'), put.text);
    const got = await raw('GET');
    assert.equal(got.status, 200);
    assert.ok(!got.text.includes(secret), got.text);
    const view = JSON.parse(got.text).data.s3;
    assert.equal(view.bucket, 'media');
    assert.equal(view.secretAccessKeySet, true);
    assert.equal(view.secretAccessKey, undefined);
    // a partial change keeps the secret and still does not echo it
    const partial = await raw('PUT', { s3: { keyPrefix: 'gw' } });
    assert.equal(partial.status, 200);
    assert.ok(!partial.text.includes(secret), partial.text);
    assert.equal(JSON.parse(partial.text).data.s3.secretAccessKeySet, true);
    const badBucket = await daemon.request('PUT', '/api/admin/settings', { s3: { bucket: 'UPPER_case' } });
    assert.equal(badBucket.status, 400);
    const key = (await daemon.request('POST', '/api/admin/keys', { name: 'x', scopes: ['*'] })).body.data.key;
    assert.equal((await daemon.request('GET', '/api/admin/settings', undefined, key)).status, 403);
    await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings });
  });

  test('persist: result fields, object bytes and Content-Type read back with the SDK, presigned URL fetchable', async () => {
    await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings });
    const { mediaId } = await receivedImage();
    const res = await daemon.request('POST', `/api/sessions/b/media/${mediaId}/persist`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const result = res.body.data;
    const now = new Date();
    assert.equal(result.key, `gw/b/${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}/${mediaId}.png`);
    assert.equal(result.bucket, 'media');
    assert.equal(result.size, PNG.length);
    assert.equal(result.mimeType, 'image/png');
    const object = await s3.client.send(new GetObjectCommand({ Bucket: 'media', Key: result.key }));
    assert.equal(object.ContentType, 'image/png');
    assert.deepEqual(await bodyBytes(object.Body), PNG);
    assert.match(result.url, /X-Amz-Signature=/);
    const viaUrl = await fetch(result.url);
    assert.equal(viaUrl.status, 200);
    assert.deepEqual(Buffer.from(await viaUrl.arrayBuffer()), PNG);
    const record = (await daemon.request('GET', `/api/sessions/b/media/${mediaId}`)).body.data;
    assert.equal(record.persisted, true);
    assert.equal(record.s3Url, `${s3.endpoint}/media/${result.key}`);
  });

  test('a 50 MB file is persisted with a multipart upload; HeadObject shows its full length and content hash', async () => {
    assert.ok(bigMediaId, 'the 50 MB streaming test records the file first');
    // a recording pass-through in front of s3rver, to see which S3 calls the upload makes (headers kept: signatures stay valid)
    const calls: string[] = [];
    const proxy = createHttpServer((req, res) => {
      calls.push(`${req.method} ${req.url}`);
      const target = new URL(s3.endpoint);
      const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    try {
      const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      assert.equal((await daemon.request('PUT', '/api/admin/settings', { s3: { ...s3.settings, endpoint } })).status, 200);
      const res = await daemon.request('POST', `/api/sessions/b/media/${bigMediaId}/persist`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.size, BIG);
      const key = res.body.data.key as string;
      assert.ok(key.endsWith(`/${bigMediaId}.bin`), key);
      const path = `/media/${key.split('/').map(encodeURIComponent).join('/')}`;
      assert.ok(calls.some((c) => c.startsWith(`POST ${path}?uploads`)), `no CreateMultipartUpload in ${calls.join(', ')}`);
      const parts = calls.filter((c) => c.startsWith(`PUT ${path}?`) && /[?&]partNumber=\d+/.test(c) && /[?&]uploadId=/.test(c));
      assert.equal(parts.length, Math.ceil(BIG / (8 * 1024 * 1024)), `UploadPart calls: ${parts.join(', ')}`);
      assert.ok(calls.some((c) => c.startsWith(`POST ${path}?uploadId=`)), `no CompleteMultipartUpload in ${calls.join(', ')}`);
      assert.ok(!calls.some((c) => c.startsWith(`PUT ${path} `) || c === `PUT ${path}` || c.startsWith(`PUT ${path}?x-id=PutObject`)), 'a single PutObject was made');

      const head = await s3.client.send(new HeadObjectCommand({ Bucket: 'media', Key: key }));
      assert.equal(head.ContentLength, BIG);
      assert.equal(head.ContentType, 'application/octet-stream');
      // s3rver reports a multipart object's ETag as the MD5 of the whole object (real S3: md5-of-parts + "-N"),
      // so the ETag checks the assembled bytes: 50 MB of 0x5a, as the file server sent them
      const md5 = createHash('md5');
      const chunk = Buffer.alloc(1024 * 1024, 0x5a);
      for (let i = 0; i < BIG / chunk.length; i += 1) md5.update(chunk);
      assert.equal(head.ETag, `"${md5.digest('hex')}"`);
      assert.equal((await daemon.request('GET', `/api/sessions/b/media/${bigMediaId}`)).body.data.persisted, true);
    } finally {
      await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings });
      proxy.closeAllConnections();
      await new Promise((done) => proxy.close(done));
    }
  });

  test('auto-persist: an incoming image is uploaded on arrival and message.received carries mediaUrl', async () => {
    const put = await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings, autoPersist: true });
    assert.equal(put.status, 200);
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/b/inbound', { from: '+15550400999', type: 'image', base64: PNG.toString('base64'), caption: 'auto' });
    assert.equal(inbound.status, 200);
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === inbound.body.data.messageId, 10000);
    assert.match(got.payload.mediaUrl, /^http:\/\/127\.0\.0\.1:\d+\/media\/gw\/b\//);
    const record = (await daemon.request('GET', `/api/sessions/b/media/${got.payload.mediaId}`)).body.data;
    assert.equal(record.persisted, true);
    const key = new URL(record.s3Url).pathname.split('/').slice(2).join('/');
    const object = await s3.client.send(new GetObjectCommand({ Bucket: 'media', Key: key }));
    assert.deepEqual(await bodyBytes(object.Body), PNG);
    await daemon.request('PUT', '/api/admin/settings', { autoPersist: false });
  });

  test('auto-persist failure: the message is still delivered, without mediaUrl', async () => {
    await daemon.request('PUT', '/api/admin/settings', { s3: { ...s3.settings, accessKeyId: 'WRONG', secretAccessKey: 'WRONG' }, autoPersist: true });
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/b/inbound', { from: '+15550400998', type: 'image', base64: PNG.toString('base64') });
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === inbound.body.data.messageId, 15000);
    assert.equal(got.payload.mediaUrl, undefined);
    assert.ok(got.payload.mediaId);
    await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings, autoPersist: false });
  });
});

describe('local media cache: size cap and eviction', () => {
  const CAP = 1024 * 1024;
  let small: TestDaemon;
  let smallEvents: EventCollector;

  before(async () => {
    small = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: `media:\n  localCacheMaxBytes: ${CAP}\n` });
    smallEvents = await collectEvents(small);
    await pairedSession(small, 'c', '+15550400003');
  });

  after(async () => {
    smallEvents.close();
    await small.cleanup();
  });

  /** a 400 KiB image: a PNG signature then random bytes, so every image differs */
  const image = (): Buffer => Buffer.concat([PNG, randomBytes(400 * 1024)]);
  const blobDir = () => join(small.dataDir, 'media');
  const onDisk = (mediaId: string) => existsSync(join(blobDir(), `${mediaId}.png`));
  const diskBytes = () => readdirSync(blobDir()).reduce((sum, name) => sum + statSync(join(blobDir(), name)).size, 0);
  const download = (mediaId: string) =>
    fetch(`${small.url}/api/sessions/c/media/${mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${small.masterKey}` } });

  async function inbound(bytes: Buffer): Promise<string> {
    const res = await small.request('POST', '/api/sandbox/sessions/c/inbound', { from: '+15550400777', type: 'image', base64: bytes.toString('base64') });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const got = await smallEvents.next((e) => e.session === 'c' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId);
    return got.payload.mediaId as string;
  }

  async function assertExpired(mediaId: string): Promise<void> {
    const res = await download(mediaId);
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'MEDIA_EXPIRED');
    assert.match(body.error.message, new RegExp(`media ${mediaId} are no longer available: the local copy was evicted from the media cache`));
  }

  async function assertDownloads(mediaId: string, bytes: Buffer): Promise<void> {
    const res = await download(mediaId);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(bytes.length));
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), `bytes of ${mediaId} differ`);
  }

  test('the config rejects a cap under 1 MiB', async () => {
    await assert.rejects(startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'media:\n  localCacheMaxBytes: 1000\n' }), /media\.localCacheMaxBytes: must be >= 1048576/);
  });

  test('past the cap the oldest blob is evicted from disk; its download answers 502 MEDIA_EXPIRED; recent ones download intact', async () => {
    const images = [image(), image(), image()];
    const ids = [await inbound(images[0]!), await inbound(images[1]!)];
    assert.ok(onDisk(ids[0]!) && onDisk(ids[1]!), 'two images fit under the cap');
    ids.push(await inbound(images[2]!));
    assert.equal(onDisk(ids[0]!), false, 'the oldest blob is still on disk');
    assert.ok(onDisk(ids[1]!) && onDisk(ids[2]!));
    assert.ok(diskBytes() <= CAP, `${diskBytes()} bytes on disk, cap ${CAP}`);

    const record = await small.request('GET', `/api/sessions/c/media/${ids[0]}`);
    assert.equal(record.status, 200);
    assert.equal(record.body.data.size, images[0]!.length);
    assert.equal(record.body.data.persisted, false);
    await assertExpired(ids[0]!);
    await assertExpired(ids[0]!); // stays expired; the record is consistent, not half-present
    await assertDownloads(ids[2]!, images[2]!);
    await assertDownloads(ids[1]!, images[1]!);
  });

  test('eviction follows use: a blob just downloaded outlives an older-used one', async () => {
    const [first, second] = [image(), image()];
    const firstId = await inbound(first);
    const secondId = await inbound(second);
    // first is now the least recently used; downloading it makes second the least recently used
    await assertDownloads(firstId, first);
    const third = image();
    const thirdId = await inbound(third);
    assert.equal(onDisk(secondId), false, 'the least recently used blob was kept');
    assert.ok(onDisk(firstId) && onDisk(thirdId));
    await assertExpired(secondId);
    await assertDownloads(firstId, first);
  });

  test('a persisted blob that was evicted is served from S3, and persisting it again answers with the stored object', async () => {
    assert.equal((await small.request('PUT', '/api/admin/settings', { s3: s3.settings })).status, 200);
    try {
      const bytes = image();
      const mediaId = await inbound(bytes);
      const persisted = await small.request('POST', `/api/sessions/c/media/${mediaId}/persist`);
      assert.equal(persisted.status, 200, JSON.stringify(persisted.body));
      await inbound(image());
      await inbound(image());
      assert.equal(onDisk(mediaId), false, 'the persisted blob was not evicted');
      await assertDownloads(mediaId, bytes);
      const again = await small.request('POST', `/api/sessions/c/media/${mediaId}/persist`);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.data.key, persisted.body.data.key);
      assert.equal(again.body.data.size, bytes.length);
      const object = await s3.client.send(new GetObjectCommand({ Bucket: 'media', Key: again.body.data.key }));
      assert.ok((await bodyBytes(object.Body)).equals(bytes));
      // without S3 settings the evicted file has no source left
      assert.equal((await small.request('PUT', '/api/admin/settings', { s3: null })).status, 200);
      const res = await download(mediaId);
      assert.equal(res.status, 502);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'MEDIA_EXPIRED');
      assert.match(body.error.message, /it was persisted to http:\/\/127\.0\.0\.1:\d+\/media\/gw\/c\//);
    } finally {
      await small.request('PUT', '/api/admin/settings', { s3: null });
    }
  });
});

describe('engine download failures', () => {
  const row = { id: '00000000-0000-4000-8000-000000000001', session: 's', messageId: 'm', chatId: null, mimeType: 'image/jpeg', size: 10, filename: null, blob: null, ref: '{}', persisted: false, s3Key: null, s3Url: null, createdAt: new Date().toISOString() };
  const serviceWith = (failure: Error) =>
    new MediaService({
      records: { repo: { get: async () => row }, blobs: { open: () => undefined, exists: () => false } } as any,
      sessions: { get: async () => ({}), connected: async () => ({ downloadMedia: async () => Promise.reject(failure) }) } as any,
      settings: { onChange: () => {}, get: () => ({ s3: null, autoPersist: false }) } as any,
      logger: { warn: () => {}, error: () => {} } as any,
    });

  test('a CDN failure while downloading received media is a 502 NETWORK_ERROR, not a 400', async () => {
    const cdn = new NetworkError('media download failed: getaddrinfo ENOTFOUND mmg.whatsapp.net', new Error('ENOTFOUND'), 'MEDIA_DOWNLOAD_FAILED');
    await assert.rejects(serviceWith(cdn).open('s', row.id), (err: GatewayError) => {
      assert.equal(err.code, 'NETWORK_ERROR');
      assert.equal(errorStatus[err.code], 502);
      assert.equal(err.message, cdn.message);
      return true;
    });
  });

  test('a persisted file the network can no longer give is served from the bucket', async () => {
    const key = 'gw/s/2026/11/persisted-fallback.jpg';
    const bytes = Buffer.from('bytes kept in the bucket');
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes, ContentType: 'image/jpeg' }));
    const persistedRow = { ...row, persisted: true, s3Key: key, s3Url: `${s3.endpoint}/${s3.bucket}/${key}` };
    const notConnected = new GatewayError('SESSION_NOT_CONNECTED', 'session s is not connected');
    for (const [failure, connected] of [
      [new GatewayError('MEDIA_EXPIRED', 'the media expired on the network'), async () => ({ downloadMedia: async () => Promise.reject(new GatewayError('MEDIA_EXPIRED', 'the media expired on the network')) })],
      [notConnected, async () => { throw notConnected; }],
    ] as const) {
      const service = new MediaService({
        records: { repo: { get: async () => persistedRow }, blobs: { open: () => undefined, exists: () => false } } as any,
        sessions: { get: async () => ({}), connected } as any,
        settings: { onChange: () => {}, get: () => ({ s3: s3.settings, autoPersist: false }) } as any,
        logger: { warn: () => {}, error: () => {} } as any,
        // s3rver listens on loopback
        s3Connection: { ...DEFAULT_S3_CONNECTION, allowPrivateEndpoint: true },
      });
      const content = await service.open('s', row.id);
      const chunks: Buffer[] = [];
      for await (const chunk of content.stream) chunks.push(chunk as Buffer);
      assert.deepEqual(Buffer.concat(chunks), bytes, `served from the bucket when the network said ${failure.code}`);
      assert.equal(content.size, bytes.length);
      const persisted = await service.persist('s', row.id);
      assert.equal(persisted.key, key, 'persisting again answers with the stored object instead of downloading');
    }
  });

  test('MEDIA_EXPIRED from the engine passes through', async () => {
    const expired = new GatewayError('MEDIA_EXPIRED', 'the media expired on the network');
    await assert.rejects(serviceWith(expired).open('s', row.id), (err: GatewayError) => err.code === 'MEDIA_EXPIRED' && errorStatus[err.code] === 502);
  });
});
