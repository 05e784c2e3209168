// A sent image carries the gateway's JPEG thumbnail (about 100 px, at most 32 KB) and its dimensions, so recipients see
// a preview instead of a grey box. The socket below hands what the messenger passes to Baileys' real generateWAMessage
// (its media preparation included: encryption, upload, thumbnail), with an upload that stores nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { generateWAMessage, type AnyMessageContent, type MiscMessageGenerationOptions, type WAMessage } from '@whiskeysockets/baileys';
import { Jimp } from 'jimp';
import pino from 'pino';
import { messengerOver } from '../helpers/baileys-messenger.js';
import { readImageSize } from '../../src/media/image-size.js';
import { THUMBNAIL_MAX_BYTES, THUMBNAIL_SIDE, THUMBNAIL_SOURCE_MAX_BYTES } from '../../src/media/thumbnail.js';

const ME = '15550940001@s.whatsapp.net';
const PEER = '15550940002@s.whatsapp.net';
const dir = mkdtempSync(join(tmpdir(), 'gateway-thumb-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function harness() {
  const logger = pino({ level: 'silent' });
  const sock = {
    user: { id: ME },
    sendMessage(jid: string, content: AnyMessageContent, options: MiscMessageGenerationOptions = {}): Promise<WAMessage> {
      return generateWAMessage(jid, content, {
        logger,
        userJid: ME,
        upload: async () => ({ mediaUrl: 'https://mmg.whatsapp.net/x', directPath: '/x' }),
        ...options,
      } as Parameters<typeof generateWAMessage>[2]);
    },
  };
  return messengerOver('thumbs', sock, logger);
}

/** a photo-like PNG: a gradient, so that its JPEG is not trivially small */
async function picture(width: number, height: number): Promise<Buffer> {
  const image = new Jimp({ width, height, color: 0xffffffff });
  image.scan(0, 0, width, height, (x, y, idx) => {
    image.bitmap.data[idx] = (x * 255) / width;
    image.bitmap.data[idx + 1] = (y * 255) / height;
    image.bitmap.data[idx + 2] = ((x ^ y) & 0xff);
  });
  return image.getBuffer('image/png');
}

const imageMessage = (sent: { raw?: unknown }) =>
  (sent.raw as { message: { imageMessage: { jpegThumbnail?: Uint8Array | string; width?: number; height?: number } } }).message.imageMessage;

const thumbnailBytes = (value: Uint8Array | string | undefined): Buffer =>
  value === undefined ? Buffer.alloc(0) : typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.from(value);

function assertThumbnail(message: ReturnType<typeof imageMessage>, width: number, height: number): void {
  const jpeg = thumbnailBytes(message.jpegThumbnail);
  assert.ok(jpeg.length > 0, 'the image carries a thumbnail');
  assert.ok(jpeg.length <= THUMBNAIL_MAX_BYTES, `${jpeg.length} bytes`);
  const size = readImageSize(jpeg);
  assert.equal(size?.format, 'jpeg');
  assert.equal(Math.max(size!.width, size!.height), THUMBNAIL_SIDE);
  assert.equal(size!.width / size!.height, width / height, 'proportions kept');
  assert.equal(message.width, width);
  assert.equal(message.height, height);
}

test('an image sent from bytes carries a JPEG thumbnail of about 100 px and its dimensions', async () => {
  const data = await picture(800, 400);
  const sent = await harness().sendMessage(PEER, { type: 'image', media: { mimeType: 'image/png', size: data.length, data }, caption: 'look' }, {});
  assertThumbnail(imageMessage(sent), 800, 400);
});

test('an image sent from a downloaded file carries one too', async () => {
  const data = await picture(300, 600);
  const path = join(dir, 'download.png');
  writeFileSync(path, data);
  const sent = await harness().sendMessage(PEER, { type: 'image', media: { mimeType: 'image/png', size: data.length, file: { path } } }, {});
  assertThumbnail(imageMessage(sent), 300, 600);
});

/** the JPEG of `png` with an EXIF orientation 6 (shown turned 90° clockwise), as phones write portrait photos */
async function turnedJpeg(png: Buffer): Promise<Buffer> {
  const jpeg = await (await Jimp.read(png)).getBuffer('image/jpeg', { quality: 80 });
  const tiff = Buffer.from([0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0]);
  const exif = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, (exif.length + 2) >> 8, (exif.length + 2) & 0xff]), exif]);
  return Buffer.concat([jpeg.subarray(0, 2), app1, jpeg.subarray(2)]);
}

test('a photo turned by its EXIF orientation gets its dimensions as shown', async () => {
  const data = await turnedJpeg(await picture(800, 400));
  assert.deepEqual(readImageSize(data), { format: 'jpeg', width: 800, height: 400 }, 'the header gives them unturned');
  const sent = await harness().sendMessage(PEER, { type: 'image', media: { mimeType: 'image/jpeg', size: data.length, data } }, {});
  assertThumbnail(imageMessage(sent), 400, 800);
});

test('an image that cannot be thumbnailed is still sent, without a thumbnail and without Baileys decoding it itself', async () => {
  // readable by any decoder (a PNG with zeros after its end), but past the size the gateway reads for a thumbnail:
  // with no thumbnail given, Baileys would make one with sharp
  const path = join(dir, 'big.png');
  writeFileSync(path, await picture(64, 64));
  truncateSync(path, THUMBNAIL_SOURCE_MAX_BYTES + 1);
  const sent = await harness().sendMessage(PEER, { type: 'image', media: { mimeType: 'image/png', size: THUMBNAIL_SOURCE_MAX_BYTES + 1, file: { path } } }, {});
  assert.ok(sent.messageId);
  assert.equal(thumbnailBytes(imageMessage(sent).jpegThumbnail).length, 0);

  const broken = Buffer.concat([(await picture(64, 64)).subarray(0, 40), Buffer.alloc(200)]);
  const alsoSent = await harness().sendMessage(PEER, { type: 'image', media: { mimeType: 'image/png', size: broken.length, data: broken } }, {});
  assert.ok(alsoSent.messageId);
  assert.equal(thumbnailBytes(imageMessage(alsoSent).jpegThumbnail).length, 0);
});
