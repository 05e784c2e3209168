// Small, valid-enough media files for send tests: each starts with the magic bytes the gateway sniffs.
import { deflateSync } from 'node:zlib';

/** A real RGB PNG with a deterministic pattern. */
export function png(size = 16): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (data: Buffer) => {
    let c = 0xffffffff;
    for (const byte of data) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8;
  header[9] = 2;
  const rows = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) rows.set([x * 16, y * 16, (x + y) * 8], y * (1 + size * 3) + 1 + x * 3);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** Bytes of `length` after a header, deterministic. */
function body(header: Buffer, length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  header.copy(out);
  for (let i = header.length; i < length; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

/** MP4 `ftyp` box, then filler. */
export const mp4 = (): Buffer => body(Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'latin1')]), 2048, 1);
/** An Ogg page header, then filler. */
export const ogg = (): Buffer => body(Buffer.from('OggS', 'latin1'), 1536, 2);
/** RIFF/WEBP header, then filler. */
export const webp = (): Buffer => {
  const b = body(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'), 1024, 3);
  b.writeUInt32LE(b.length - 8, 4);
  return b;
};
export const pdf = (): Buffer => body(Buffer.from('%PDF-1.4\n', 'latin1'), 3000, 4);

export const VCARD = ['BEGIN:VCARD', 'VERSION:3.0', 'FN:Jane Roe', 'TEL;type=CELL;waid=15550123456:+1 555 012 3456', 'END:VCARD'].join('\n');
