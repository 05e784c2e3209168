import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
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
    assert.ok(growth < BIG / 4, `RSS grew ${Math.round(growth / 1024 / 1024)} MB while streaming a 50 MB file`);
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

  test('wrong credentials: 502 with S3\'s message, record stays unpersisted', async () => {
    await daemon.request('PUT', '/api/admin/settings', { s3: { ...s3.settings, accessKeyId: 'WRONG', secretAccessKey: 'WRONG' } });
    const { mediaId } = await receivedImage();
    const res = await daemon.request('POST', `/api/sessions/b/media/${mediaId}/persist`);
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'S3_ERROR');
    assert.match(res.body.error.message, /S3 upload failed: .*Signature|S3 upload failed: .*Access|S3 upload failed/);
    const record = (await daemon.request('GET', `/api/sessions/b/media/${mediaId}`)).body.data;
    assert.equal(record.persisted, false);
    assert.equal(record.s3Url, undefined);
  });

  test('settings: the secret is never returned; validation', async () => {
    const put = await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings });
    assert.equal(put.status, 200);
    const got = await daemon.request('GET', '/api/admin/settings');
    assert.equal(got.body.data.s3.bucket, 'media');
    assert.equal(got.body.data.s3.secretAccessKeySet, true);
    assert.equal(got.body.data.s3.secretAccessKey, undefined);
    assert.ok(!JSON.stringify(put.body).includes('secretAccessKey"'));
    const badBucket = await daemon.request('PUT', '/api/admin/settings', { s3: { bucket: 'UPPER_case' } });
    assert.equal(badBucket.status, 400);
    const key = (await daemon.request('POST', '/api/admin/keys', { name: 'x', scopes: ['*'] })).body.data.key;
    assert.equal((await daemon.request('GET', '/api/admin/settings', undefined, key)).status, 403);
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
