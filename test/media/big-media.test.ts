// Issue 18, big media: a media route's body larger than server.bodyLimitBytes is parsed while it streams in, its
// `base64` decoded on the way; a URL send's download streams into a staged file of the blob store. Each answer must be
// the one the small path gives.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** larger than the default 1 MB body limit once in base64, so media routes take the streamed path */
const BIG = 3 * 1024 * 1024;
const A = '+15550180001';
const B = '+15550180002';

let daemon: TestDaemon;
let events: EventCollector;
let files: Server;
let filesUrl: string;
let resume!: () => void;
const resumeDownload = new Promise<void>((done) => (resume = done));
const image = Buffer.concat([PNG_SIGNATURE, randomBytes(BIG - PNG_SIGNATURE.length)]);
const document = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(BIG - 9)]);

before(async () => {
  files = createServer((req, res) => {
    if (req.url === '/sized.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': document.length }).end(document);
    } else if (req.url === '/truncated.pdf') {
      // declares the whole document, sends half, then drops the connection: the download fails after it began
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': document.length });
      res.write(document.subarray(0, document.length / 2), () => setTimeout(() => res.socket?.destroy(), 50));
    } else if (req.url === '/paused.pdf') {
      // half the document, then the rest only when the test says so: what the daemon holds meanwhile can be looked at
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': document.length });
      res.write(document.subarray(0, document.length / 2));
      void resumeDownload.then(() => res.end(document.subarray(document.length / 2)));
    } else if (req.url === '/chunked.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      for (let at = 0; at < document.length; at += 100_000) res.write(document.subarray(at, at + 100_000));
      res.end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((done) => files.listen(0, '127.0.0.1', done));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
});

after(async () => {
  events.close();
  await daemon.cleanup();
  files.closeAllConnections();
  await new Promise((done) => files.close(done));
});

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function download(session: string, mediaId: string): Promise<Buffer> {
  const res = await fetch(`${daemon.url}/api/sessions/${session}/media/${mediaId}/download`, { method: 'POST', headers: { Authorization: `Bearer ${daemon.masterKey}` } });
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

/** Sends `body` (a JSON text) and, on success, checks that sender and recipient both hold `expected` byte for byte. */
async function sendAndCheck(body: string, expected: Buffer, mimeType: string): Promise<void> {
  const sent = await daemon.request('POST', '/api/messages/send', body);
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === sent.body.data.messageId, 15_000);
  assert.equal(received.payload.mimeType, mimeType);
  assert.equal(sha(await download('a', sent.body.data.mediaId)), sha(expected));
  assert.equal(sha(await download('b', received.payload.mediaId)), sha(expected));
}

const sendBody = (fields: Record<string, unknown>) => JSON.stringify({ session: 'a', chatId: B, ...fields });

test('a large base64 image is stored byte for byte, as plain, data: URI and slash-escaped JSON', async () => {
  const base64 = image.toString('base64');
  await sendAndCheck(sendBody({ type: 'image', base64, caption: 'big' }), image, 'image/png');
  await sendAndCheck(sendBody({ type: 'document', filename: 'x.pdf', base64: `data:application/pdf;base64,${document.toString('base64')}` }), document, 'application/pdf');
  // PHP's json_encode writes every "/" as "\/", and MIME-style base64 breaks its lines
  await sendAndCheck(sendBody({ type: 'image', base64: base64.replace(/(.{76})/g, '$1\r\n') }).replace(/\//g, '\\/'), image, 'image/png');
});

test('a large body answers what a small one does: invalid base64, mixed alphabets, empty, bad JSON', async () => {
  const small = image.subarray(0, 300).toString('base64');
  const large = image.toString('base64');
  const pad = ' '.repeat(2 * 1024 * 1024);
  const cases: Array<[name: string, smallBody: string, largeBody: string]> = [
    ['not base64', sendBody({ type: 'image', base64: `${small.slice(0, 100)}!${small.slice(100)}` }), sendBody({ type: 'image', base64: `${large.slice(0, 100_000)}!${large.slice(100_000)}` })],
    ['mixed alphabets', sendBody({ type: 'image', base64: 'iVBORw0K+/-_' }), sendBody({ type: 'image', base64: `${large.slice(0, 2000)}-_${large.slice(2002)}` })],
    ['empty', sendBody({ type: 'image', base64: '' }), sendBody({ type: 'image', base64: '' }) + pad],
    ['raw line break in the string', sendBody({ type: 'image', base64: 'QUJD' }).replace('QUJD', 'QU\nJD'), sendBody({ type: 'image', base64: large }).replace(large.slice(500, 504), `${large.slice(500, 502)}\n${large.slice(502, 504)}`)],
    ['unterminated', sendBody({ type: 'image', base64: small }).slice(0, -2), sendBody({ type: 'image', base64: large }).slice(0, -2)],
    ['not an image', sendBody({ type: 'image', base64: document.subarray(0, 300).toString('base64') }), sendBody({ type: 'image', base64: document.toString('base64') })],
  ];
  for (const [name, smallBody, largeBody] of cases) {
    assert.ok(Buffer.byteLength(largeBody) > 1024 * 1024, name);
    const expected = await daemon.request('POST', '/api/messages/send', smallBody);
    const got = await daemon.request('POST', '/api/messages/send', largeBody);
    assert.equal(expected.status, 400, `${name}: ${JSON.stringify(expected.body)}`);
    assert.equal(got.status, expected.status, `${name}: ${JSON.stringify(got.body)}`);
    assert.equal(got.body.error.code, expected.body.error.code, name);
    if (got.body.error.code !== 'INVALID_JSON') assert.deepEqual(got.body.error.details, expected.body.error.details, name);
  }
});

test('past the media limit the body is still refused with 413 while it streams', async () => {
  const small = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: `server:\n  mediaBodyLimitBytes: ${2 * 1024 * 1024}\n` });
  try {
    await pairedSession(small, 'a', A);
    const body = sendBody({ type: 'image', base64: image.toString('base64') });
    // without Content-Length (chunked), the limit is found while streaming
    const res = await fetch(`${small.url}/api/messages/send`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${small.masterKey}`, 'Content-Type': 'application/json' },
      body: new Blob([body]).stream(),
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'PAYLOAD_TOO_LARGE');
  } finally {
    await small.cleanup();
  }
});

test('an async send and a sandbox inbound message take the streamed path too', async () => {
  const base64 = image.toString('base64');
  const accepted = await daemon.request('POST', '/api/messages/send', sendBody({ type: 'image', base64 }), undefined, { Prefer: 'respond-async' });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const result = await events.next((e) => e.event === 'command.result' && e.payload.commandId === accepted.body.data.commandId, 15_000);
  assert.equal(result.payload.success, true, JSON.stringify(result.payload));
  assert.equal(sha(await download('a', result.payload.result.mediaId)), sha(image));

  const inbound = await daemon.request('POST', '/api/sandbox/sessions/b/inbound', JSON.stringify({ from: '+15550180999', type: 'image', base64 }));
  assert.equal(inbound.status, 200, JSON.stringify(inbound.body));
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === inbound.body.data.messageId, 15_000);
  assert.equal(sha(await download('b', received.payload.mediaId)), sha(image));
});

test('a document by URL is stored byte for byte, with and without Content-Length', async () => {
  await sendAndCheck(sendBody({ type: 'document', filename: 'sized.pdf', url: `${filesUrl}/sized.pdf` }), document, 'application/pdf');
  await sendAndCheck(sendBody({ type: 'document', filename: 'chunked.pdf', url: `${filesUrl}/chunked.pdf` }), document, 'application/pdf');
});

test('a URL send downloads into a file the media record adopts; a send that fails after its download began leaves none', async () => {
  const sent = await daemon.request('POST', '/api/messages/send', sendBody({ type: 'document', filename: 'sized.pdf', url: `${filesUrl}/sized.pdf` }));
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === sent.body.data.messageId, 15_000);
  // the sender's blob is the download itself, and the sandbox recipient's is a hard link to it: one file on disk
  const mediaDir = join(daemon.dataDir, 'media');
  const sender = statSync(join(mediaDir, `${sent.body.data.mediaId}.pdf`));
  const recipient = statSync(join(mediaDir, `${received.payload.mediaId}.pdf`));
  assert.equal(sender.size, document.length);
  assert.equal(recipient.ino, sender.ino);
  assert.equal(sender.nlink, 2);
  // the download completes, then its type is refused; the download breaks off half-way: either way its file goes
  const refused = await daemon.request('POST', '/api/messages/send', sendBody({ type: 'image', url: `${filesUrl}/sized.pdf` }));
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'VALIDATION_FAILED');
  const broken = await daemon.request('POST', '/api/messages/send', sendBody({ type: 'document', filename: 'truncated.pdf', url: `${filesUrl}/truncated.pdf` }));
  assert.equal(broken.status, 400, JSON.stringify(broken.body));
  assert.equal(broken.body.error.code, 'MEDIA_DOWNLOAD_FAILED');
  assert.deepEqual(readdirSync(mediaDir).filter((name) => name.endsWith('.part')), [], 'no staged download is left in the blob store');
});

test('a URL send streams its download to disk: half-way through, half the file is in a staged file of the blob store', async () => {
  const sending = daemon.request('POST', '/api/messages/send', sendBody({ type: 'document', filename: 'paused.pdf', url: `${filesUrl}/paused.pdf` }));
  const mediaDir = join(daemon.dataDir, 'media');
  const staged = () => readdirSync(mediaDir).filter((name) => name.endsWith('.part')).map((name) => statSync(join(mediaDir, name)).size);
  const deadline = Date.now() + 15_000;
  try {
    while (!(staged()[0]! >= document.length / 2)) {
      assert.ok(Date.now() < deadline, `no staged file reached half the document (staged: ${JSON.stringify(staged())})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    resume();
  }
  const sent = await sending;
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  assert.equal(sha(await download('a', sent.body.data.mediaId)), sha(document));
  assert.deepEqual(staged(), [], 'the record adopted the staged file');
});
