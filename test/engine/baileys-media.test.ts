// Media download on the Baileys engine: a CDN 404/410 asks the phone to upload the file again, then retries once;
// when that fails the error is MEDIA_EXPIRED. (The emulator does not answer re-upload requests, so the socket is faked.)
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { getMediaKeys, type WAMessage } from '@whiskeysockets/baileys';
import { GatewayError } from '../../src/errors.js';
import { TtlCache } from '../../src/engine/baileys/cache.js';
import type { BaileysMediaRef } from '../../src/engine/baileys/content.js';
import type { SessionContext } from '../../src/engine/baileys/context.js';
import { Identities } from '../../src/engine/baileys/identities.js';
import { BaileysMedia } from '../../src/engine/baileys/media.js';
import { createLogger } from '../../src/logger.js';

const PLAIN = Buffer.from('the bytes of a photo, more or less', 'utf8');

describe('baileys media download', () => {
  let server: Server;
  let base = '';
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
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const body = files.get(req.url ?? '');
      if (req.url === '/broken') res.statusCode = 500;
      else if (!body) res.statusCode = 404;
      res.end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((done) => server.close(() => done())));

  const ref = (path: string): BaileysMediaRef => ({
    mediaType: 'image',
    mediaKey: mediaKey.toString('base64'),
    url: `${base}${path}`,
    key: { remoteJid: '15550000001@s.whatsapp.net', id: 'ABC', fromMe: false },
  });

  /** a session context whose socket answers re-upload requests with `reupload` */
  const media = (reupload: ((m: WAMessage) => Promise<WAMessage>) | undefined) =>
    new BaileysMedia({
      name: 't',
      hooks: { connection: () => undefined, event: () => undefined },
      logger: createLogger('silent'),
      ids: new Identities(),
      groups: new Map(),
      ownSends: new TtlCache(1000),
      dispatcher: undefined,
      ready: () => Promise.reject(new Error('unused')),
      current: () => (reupload ? ({ updateMediaMessage: reupload } as never) : undefined),
      lookupMessage: () => undefined,
      me: () => ({}),
      isBusiness: () => false,
    } satisfies SessionContext);

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
});
