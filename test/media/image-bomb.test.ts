// Image bombs (issue 27, item 3.1): an image's dimensions are read from its header and one past 16 megapixels is refused
// before any decode; decodes run in a worker. A link preview whose image is refused still sends, without a thumbnail;
// a picture that is too large answers 400 IMAGE_TOO_LARGE.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import { Jimp } from 'jimp';
import { GatewayError } from '../../src/errors.js';
import { readImageSize } from '../../src/media/image-size.js';
import { checkImageSize, IMAGE_MAX_PIXELS, ImageDecodeError, refuseOversizedImage, renderJpeg } from '../../src/media/image.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { png } from '../engine/samples.js';

/** A PNG whose header claims `width`×`height` RGBA pixels, with a few rows of data: under 1 KB. */
function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, 'latin1');
    data.copy(out, 8);
    return out; // the CRC is left zero: the header is read before any check a decoder would make
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 6;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.alloc(64 * 1024))), chunk('IEND', Buffer.alloc(0))]);
}

const BOMB = pngClaiming(20_000, 20_000);

/** A complete, valid PNG of `side`×`side` black RGBA pixels: small once compressed, decoded in full by any decoder. */
function blackPng(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, 'latin1');
    data.copy(out, 8);
    out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8;
  header[9] = 6;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.alloc(side * (1 + side * 4)), { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

/** Just past the limit (4100×4100 = 16.8 megapixels), and complete: without the header check it would be decoded. */
const OVER_LIMIT = blackPng(4100);

/** A little-endian TIFF of directories only, one per page, each declaring its ImageWidth and ImageLength (LONG). */
function tiffPages(pages: Array<[number, number]>): Buffer {
  const directory = 2 + 2 * 12 + 4;
  const out = Buffer.alloc(8 + pages.length * directory);
  out.write('II*\0', 0, 'latin1');
  out.writeUInt32LE(8, 4);
  pages.forEach(([width, height], i) => {
    const at = 8 + i * directory;
    out.writeUInt16LE(2, at);
    [[256, width], [257, height]].forEach(([tag, value], n) => {
      out.writeUInt16LE(tag!, at + 2 + n * 12);
      out.writeUInt16LE(4, at + 4 + n * 12);
      out.writeUInt32LE(1, at + 6 + n * 12);
      out.writeUInt32LE(value!, at + 10 + n * 12);
    });
    out.writeUInt32LE(i + 1 < pages.length ? at + directory : 0, at + 2 + 2 * 12);
  });
  return out;
}

describe('image headers', () => {
  it('reads the dimensions of PNG, JPEG, GIF, BMP, TIFF and WebP from their headers', async () => {
    const jpeg = await new Jimp({ width: 33, height: 21, color: 0xff0000ff }).getBuffer('image/jpeg');
    const bmp = await new Jimp({ width: 5, height: 7, color: 0xff0000ff }).getBuffer('image/bmp');
    const gif = await new Jimp({ width: 9, height: 4, color: 0xff0000ff }).getBuffer('image/gif');
    const tiff = await new Jimp({ width: 12, height: 10, color: 0xff0000ff }).getBuffer('image/tiff');
    assert.deepEqual(readImageSize(png(40)), { format: 'png', width: 40, height: 40 });
    assert.deepEqual(readImageSize(jpeg), { format: 'jpeg', width: 33, height: 21 });
    assert.deepEqual(readImageSize(bmp), { format: 'bmp', width: 5, height: 7 });
    assert.deepEqual(readImageSize(gif), { format: 'gif', width: 9, height: 4 });
    assert.deepEqual(readImageSize(tiff), { format: 'tiff', width: 12, height: 10 });
    const vp8x = Buffer.alloc(30);
    vp8x.write('RIFF', 0, 'latin1');
    vp8x.write('WEBPVP8X', 8, 'latin1');
    vp8x.writeUIntLE(19_999, 24, 3);
    vp8x.writeUIntLE(19_999, 27, 3);
    assert.deepEqual(readImageSize(vp8x), { format: 'webp', width: 20_000, height: 20_000 });
    assert.equal(readImageSize(Buffer.from('not an image')), undefined);
    assert.equal(readImageSize(BOMB.subarray(0, 20)), undefined, 'a header cut short is not read');
  });

  it('a JPEG whose later frame header is huge is judged by that frame', async () => {
    const jpeg = await new Jimp({ width: 8, height: 8, color: 0xff0000ff }).getBuffer('image/jpeg');
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    const frame = Buffer.from(jpeg.subarray(sof, sof + 2 + jpeg.readUInt16BE(sof + 2)));
    frame.writeUInt16BE(60_000, 5);
    frame.writeUInt16BE(60_000, 7);
    const crafted = Buffer.concat([jpeg.subarray(0, jpeg.length - 2), frame, jpeg.subarray(jpeg.length - 2)]);
    assert.deepEqual(readImageSize(crafted), { format: 'jpeg', width: 60_000, height: 60_000 });
  });

  it('a TIFF is judged by all its pages: a small first page does not hide large ones', () => {
    const small = tiffPages([[10, 10]]);
    assert.deepEqual(readImageSize(small), { format: 'tiff', width: 10, height: 10 });
    const pages = tiffPages([[10, 10], [2000, 2000], [2000, 2000], [2000, 2000], [2000, 2000], [2000, 2000]]);
    assert.deepEqual(readImageSize(pages), { format: 'tiff', width: 10, height: 10, pages: 6, pixels: 20_000_100 });
    assert.throws(() => checkImageSize(pages), (err: GatewayError) => err.code === 'IMAGE_TOO_LARGE' && /6 pages/.test(err.message));
    assert.deepEqual(checkImageSize(tiffPages([[10, 10], [1000, 1000]])), { format: 'tiff', width: 10, height: 10, pages: 2, pixels: 1_000_100 });
    // a chain that loops back, or longer than any real document, is not a readable image (so never decoded)
    const looped = tiffPages([[10, 10], [10, 10]]);
    looped.writeUInt32LE(8, 8 + 30 + 2 + 2 * 12); // the second directory's next: the first
    assert.equal(readImageSize(looped), undefined);
    assert.equal(readImageSize(tiffPages(Array.from({ length: 300 }, () => [1, 1] as [number, number]))), undefined);
  });

  it('an image past 16 megapixels is refused with IMAGE_TOO_LARGE, without decoding it', async () => {
    assert.equal(IMAGE_MAX_PIXELS, 16_000_000);
    assert.throws(() => checkImageSize(BOMB), (err: GatewayError) => err.code === 'IMAGE_TOO_LARGE' && /20000×20000/.test(err.message));
    await assert.rejects(renderJpeg(BOMB, { kind: 'fit', side: 192, quality: 60 }, { timeoutMs: 5000 }), (err: GatewayError) => err.code === 'IMAGE_TOO_LARGE');
    assert.deepEqual(checkImageSize(pngClaiming(4000, 4000)), { format: 'png', width: 4000, height: 4000 });
    // before a picture is handed to an engine: refused when too large, left to the decoder's strict check when unreadable
    assert.throws(() => refuseOversizedImage(BOMB, '/url'), (err: GatewayError) => err.code === 'IMAGE_TOO_LARGE' && err.details?.[0]?.path === '/url');
    refuseOversizedImage(Buffer.from('not an image'));
  });

  it('a normal image is decoded in the worker', async () => {
    const thumbnail = await renderJpeg(png(300), { kind: 'fit', side: 192, quality: 60 }, { timeoutMs: 30_000 });
    const decoded = await Jimp.read(thumbnail);
    assert.deepEqual([decoded.width, decoded.height], [192, 192]);
    const square = await renderJpeg(await new Jimp({ width: 50, height: 30, color: 0x00ff00ff }).getBuffer('image/png'), { kind: 'square', side: 64, quality: 90 }, { timeoutMs: 30_000 });
    const squared = await Jimp.read(square);
    assert.deepEqual([squared.width, squared.height], [64, 64]);
  });
});

describe('the decoder workers', () => {
  it('a decode past its deadline, or of an image that is not one, fails alone; the workers keep serving', async () => {
    const fit = { kind: 'fit', side: 64, quality: 60 } as const;
    await assert.rejects(renderJpeg(png(300), fit, { timeoutMs: 1 }), ImageDecodeError);
    const corrupt = Buffer.from(png(64));
    corrupt.fill(0x55, 40, corrupt.length - 12);
    await assert.rejects(renderJpeg(corrupt, fit, { timeoutMs: 30_000 }), ImageDecodeError);
    const many = await Promise.all(Array.from({ length: 5 }, (_, i) => renderJpeg(png(40 + i), fit, { timeoutMs: 60_000 })));
    for (const jpeg of many) assert.equal(jpeg.subarray(0, 3).toString('hex'), 'ffd8ff');
  });
});

describe('image bombs against the daemon', () => {
  const A = '+15550170001';
  const B = '+15550170002';
  let daemon: TestDaemon;
  let events: EventCollector;
  let site: Server;
  let base: string;
  let healthWhileDecoding: Promise<number> | undefined;

  before(async () => {
    site = createServer((req, res) => {
      const html = (image: string) => {
        res.setHeader('content-type', 'text/html');
        res.end(`<html><head><meta property="og:title" content="A page"><meta property="og:image" content="${image}"></head></html>`);
      };
      if (req.url === '/bomb-page') return html('/bomb.png');
      if (req.url === '/fine-page') return html('/fine.png');
      res.setHeader('content-type', 'image/png');
      if (req.url === '/fine.png') return res.end(png(256));
      // the daemon is asked for its health as soon as it holds the image
      res.end(OVER_LIMIT, () => {
        healthWhileDecoding = fetch(`${daemon.url}/api/health`).then((answer) => answer.status);
      });
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_MEDIA_ALLOW_PRIVATE_URLS: 'true' } });
    events = await collectEvents(daemon);
    await pairedSession(daemon, 'a', A);
    await pairedSession(daemon, 'b', B);
  });

  after(async () => {
    events?.close();
    await daemon?.cleanup();
    site?.closeAllConnections();
    await new Promise<void>((done) => site?.close(() => done()));
  });

  const received = (messageId: string) =>
    events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === messageId, 10_000, `message ${messageId} at b`);

  it('a link whose og:image is past the limit previews without a thumbnail, and the daemon answers meanwhile', async () => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: `look ${base}/bomb-page` });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.deepEqual(sent.body.data.linkPreview, { status: 'sent', url: `${base}/bomb-page` });
    assert.equal(await healthWhileDecoding, 200);
    const got = await received(sent.body.data.messageId);
    assert.equal(got.payload.linkPreview.title, 'A page');
    assert.equal(got.payload.linkPreview.thumbnail, undefined);
  });

  it('a normal image still previews with a thumbnail', async () => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: `look ${base}/fine-page` });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const got = await received(sent.body.data.messageId);
    const thumbnail = await Jimp.read(Buffer.from(got.payload.linkPreview.thumbnail, 'base64'));
    assert.deepEqual([thumbnail.width, thumbnail.height], [192, 192]);
  });

  it('an image or sticker past 16 megapixels is not sent: 400 IMAGE_TOO_LARGE before any decode, from base64 or a URL', async () => {
    const send = (body: object) => daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, ...body });
    const refused = await send({ type: 'image', base64: BOMB.toString('base64'), caption: 'bomb' });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'IMAGE_TOO_LARGE');
    assert.equal(refused.body.error.details[0].path, '/base64');
    const fromUrl = await send({ type: 'image', url: `${base}/over-limit.png` });
    assert.equal(fromUrl.status, 400, JSON.stringify(fromUrl.body));
    assert.equal(fromUrl.body.error.code, 'IMAGE_TOO_LARGE');
    assert.equal(fromUrl.body.error.details[0].path, '/url');
    const webp = Buffer.alloc(30);
    webp.write('RIFF', 0, 'latin1');
    webp.write('WEBPVP8X', 8, 'latin1');
    webp.writeUIntLE(19_999, 24, 3);
    webp.writeUIntLE(19_999, 27, 3);
    const sticker = await send({ type: 'sticker', base64: webp.toString('base64') });
    assert.equal(sticker.status, 400, JSON.stringify(sticker.body));
    assert.equal(sticker.body.error.code, 'IMAGE_TOO_LARGE');
    const fine = await send({ type: 'image', base64: png(64).toString('base64'), caption: 'fine' });
    assert.equal(fine.status, 200, JSON.stringify(fine.body));
    const got = await received(fine.body.data.messageId);
    assert.equal(got.payload.type, 'image');
  });

  it('a picture past 16 megapixels answers 400 IMAGE_TOO_LARGE', async () => {
    const refused = await daemon.request('PUT', '/api/sessions/a/profile/picture', { base64: BOMB.toString('base64') });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'IMAGE_TOO_LARGE');
    assert.equal(refused.body.error.details[0].path, '/base64');
    const fine = await daemon.request('PUT', '/api/sessions/a/profile/picture', { base64: png(64).toString('base64') });
    assert.ok(fine.status < 300, JSON.stringify(fine.body));
  });
});
