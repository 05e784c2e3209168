// Media download on the Baileys engine: a CDN 404/410 asks the phone to upload the file again, then retries once;
// when that fails the error is MEDIA_EXPIRED. (The emulator does not answer re-upload requests, so the socket is faked.)
// The sender of a message controls its url and directPath: the download goes only to WhatsApp media hosts (or configured
// ones), never to the host a message names otherwise, with a deadline and a byte cap.
import { DEFAULT_SERVER_ACK_TIMING, ServerAcks } from '../../src/engine/server-acks.js';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { getMediaKeys, type WAMessage } from '@whiskeysockets/baileys';
import { Agent } from 'undici';
import { GatewayError } from '../../src/errors.js';
import { TtlCache } from '../../src/engine/baileys/cache.js';
import type { BaileysMediaRef } from '../../src/engine/baileys/content.js';
import type { SessionContext } from '../../src/engine/baileys/context.js';
import { Identities } from '../../src/engine/baileys/identities.js';
import { BaileysMedia } from '../../src/engine/baileys/media.js';
import { DEFAULT_DOWNLOAD_SETTINGS, mediaDownloadUrl, type MediaDownloadSettings } from '../../src/engine/baileys/media-download.js';
import { createLogger } from '../../src/logger.js';
import { selfSignedCertificate } from '../helpers/tls.js';

const PLAIN = Buffer.from('the bytes of a photo, more or less', 'utf8');

describe('baileys media download', () => {
  let server: Server;
  /** what a remote sender would point a message at: must never be asked for anything */
  let attacker: HttpServer;
  const attackerHits: string[] = [];
  let attackerPort = 0;
  let host = '';
  let base = '';
  /** the media server is trusted through the dispatcher (standing in for the session's proxy) */
  let dispatcher: Agent;
  let mediaKey: Buffer;
  let encrypted: Buffer;
  const files = new Map<string, Buffer>();
  const hits: string[] = [];

  before(async () => {
    mediaKey = randomBytes(32);
    const { cipherKey, iv } = await getMediaKeys(mediaKey, 'image');
    const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
    // the CDN file is the ciphertext followed by a 10-byte MAC
    encrypted = Buffer.concat([cipher.update(PLAIN), cipher.final(), randomBytes(10)]);
    const tls = selfSignedCertificate();
    dispatcher = new Agent({ connect: { ca: tls.cert } });
    server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/stall') return void res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).write(encrypted.subarray(0, 16));
      if (req.url === '/huge') {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        return void pump();
      }
      const body = files.get(req.url ?? '');
      if (req.url === '/broken') res.statusCode = 500;
      else if (!body) res.statusCode = 404;
      res.end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    base = `https://${host}`;
    attacker = createHttpServer((req, res) => {
      attackerHits.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith('/redirect')) return void res.writeHead(302, { location: '/internal-admin' }).end();
      res.end('internal secret'.padEnd(32, '.'));
    });
    await new Promise<void>((done) => attacker.listen(0, '127.0.0.1', done));
    attackerPort = (attacker.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
    await new Promise<void>((done) => attacker.close(() => done()));
    await dispatcher.close();
  });

  const ref = (path: string): BaileysMediaRef => ({
    mediaType: 'image',
    mediaKey: mediaKey.toString('base64'),
    url: `${base}${path}`,
    key: { remoteJid: '15550000001@s.whatsapp.net', id: 'ABC', fromMe: false },
  });

  /** a session context whose socket answers re-upload requests with `reupload` */
  const media = (reupload: ((m: WAMessage) => Promise<WAMessage>) | undefined, settings: Partial<MediaDownloadSettings> = {}) =>
    new BaileysMedia({
      name: 't',
      hooks: { connection: () => undefined, event: () => undefined },
      logger: createLogger('silent'),
      ids: new Identities(),
      groups: new Map(),
      ownSends: new TtlCache(1000),
      sendsInFlight: new Map(),
      serverAcks: new ServerAcks(DEFAULT_SERVER_ACK_TIMING, () => undefined),
      historyRequests: new TtlCache(1000),
      dispatcher,
      ready: () => Promise.reject(new Error('unused')),
      current: () => (reupload ? ({ updateMediaMessage: reupload } as never) : undefined),
      lookupMessage: async () => undefined,
      me: () => ({}),
      isBusiness: () => false,
    } satisfies SessionContext, { ...DEFAULT_DOWNLOAD_SETTINGS, trustedHosts: [host], ...settings });

  const read = async (stream: NodeJS.ReadableStream): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  };

  it('decrypts a file the CDN still has', async () => {
    files.set('/live', encrypted);
    assert.ok((await read(await media(undefined).download(ref('/live')))).equals(PLAIN));
  });

  it('re-uploads an expired file through the phone, then downloads the new copy', async () => {
    files.set('/renewed', encrypted);
    let asked: WAMessage | undefined;
    const stream = await media(async (m) => {
      asked = m;
      return { ...m, message: { imageMessage: { ...m.message!.imageMessage, url: `${base}/renewed` } } };
    }).download(ref('/expired'));
    assert.ok((await read(stream)).equals(PLAIN));
    assert.equal(asked?.key.id, 'ABC');
    assert.ok(asked?.message?.imageMessage?.mediaKey);
  });

  it('MEDIA_EXPIRED when the phone cannot upload it again', async () => {
    await assert.rejects(
      media(async () => {
        throw new Error('Media re-upload failed by device (NOT_FOUND)');
      }).download(ref('/expired')),
      (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_EXPIRED',
    );
  });

  it('MEDIA_EXPIRED when the session is not connected to ask', async () => {
    await assert.rejects(media(undefined).download(ref('/expired')), (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_EXPIRED');
  });

  it('MEDIA_DOWNLOAD_FAILED for other CDN failures; MEDIA_NOT_FOUND for a ref that is not Baileys media', async () => {
    await assert.rejects(media(undefined).download(ref('/broken')), (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_DOWNLOAD_FAILED');
    await assert.rejects(media(undefined).download({ nope: true }), (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_NOT_FOUND');
  });

  it('a message pointing at another host is never fetched: no request reaches it, redirects and plain http included', async () => {
    const crafted = (location: Partial<BaileysMediaRef>): BaileysMediaRef => ({ ...ref('/x'), url: undefined, ...location });
    for (const url of [`http://127.0.0.1:${attackerPort}/redirect?from=attacker`, `https://127.0.0.1:${attackerPort}/x`, `https://mmg.whatsapp.net.127.0.0.1.nip.io/x`]) {
      await assert.rejects(media(undefined).download(crafted({ url })), (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_DOWNLOAD_FAILED', url);
    }
    for (const directPath of [`//127.0.0.1:${attackerPort}/x`, `http://127.0.0.1:${attackerPort}/x`, '/\\127.0.0.1/x', 'v/t62/x', '/v t62']) {
      await assert.rejects(
        media(undefined).download(crafted({ directPath, url: `http://127.0.0.1:${attackerPort}/x` })),
        (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_DOWNLOAD_FAILED',
        directPath,
      );
    }
    assert.deepEqual(attackerHits, []);
  });

  it("a directPath is fetched from the media host, never from the host the sender's url names", async () => {
    files.set('/v/t62/file', encrypted);
    const stream = await media(undefined).download({ ...ref('/unused'), url: `https://127.0.0.1:${attackerPort}/v/t62/file`, directPath: '/v/t62/file' });
    assert.ok((await read(stream)).equals(PLAIN));
    assert.deepEqual(attackerHits, []);
    assert.ok(hits.includes('/v/t62/file'));
  });

  it('the download URL: only https WhatsApp media hosts (or configured ones), default port, no credentials', () => {
    const none: string[] = [];
    assert.equal(mediaDownloadUrl({ url: 'https://mmg.whatsapp.net/d/f/abc.enc' }, none).url.href, 'https://mmg.whatsapp.net/d/f/abc.enc');
    assert.equal(mediaDownloadUrl({ url: 'https://media-fra5-1.cdn.whatsapp.net/v/x' }, none).url.host, 'media-fra5-1.cdn.whatsapp.net');
    assert.equal(mediaDownloadUrl({ directPath: '/v/t62/abc', url: 'https://evil.example/x' }, none).url.href, 'https://mmg.whatsapp.net/v/t62/abc');
    assert.equal(mediaDownloadUrl({ directPath: '/v/t62/abc', url: 'https://mmg.whatsapp.net:8443/x' }, none).url.host, 'mmg.whatsapp.net');
    for (const url of ['http://mmg.whatsapp.net/x', 'https://mmg.whatsapp.net:8443/x', 'https://user@mmg.whatsapp.net/x', 'https://whatsapp.net.evil.example/x', 'https://10.0.0.1/x', 'file:///etc/passwd']) {
      assert.throws(() => mediaDownloadUrl({ url }, none), (err: unknown) => err instanceof GatewayError && err.code === 'MEDIA_DOWNLOAD_FAILED', url);
    }
    assert.equal(mediaDownloadUrl({ directPath: '/v/abc' }, ['127.0.0.1:9']).url.href, 'https://127.0.0.1:9/v/abc');
    assert.equal(mediaDownloadUrl({ directPath: '/v/abc' }, ['127.0.0.1:9']).trusted, true);
  });

  it('a download that stalls ends at its deadline; one past the byte cap ends too', async () => {
    const stalled = await media(undefined, { timeoutMs: 300 }).download(ref('/stall'));
    await assert.rejects(read(stalled));
    const huge = await media(undefined, { maxBytes: 1024 * 1024 }).download(ref('/huge'));
    await assert.rejects(read(huge), /larger than 1048576 bytes/);
  });
});
