// An image's dimensions read from its header alone (PNG, JPEG, GIF, BMP, TIFF, WebP), without decoding a pixel: what
// decides whether the image may be decoded at all (src/media/image.ts).

export interface ImageSize {
  format: 'png' | 'jpeg' | 'gif' | 'bmp' | 'tiff' | 'webp';
  width: number;
  height: number;
  /** an image of several pages (TIFF): how many, and the pixels of them all (what a decoder allocates) */
  pages?: number;
  pixels?: number;
}

/** The dimensions the header declares; undefined when the format is not one of these or the header is cut short. */
export function readImageSize(data: Buffer): ImageSize | undefined {
  try {
    if (data.length >= 24 && data.readUInt32BE(0) === 0x89504e47 && data.toString('latin1', 12, 16) === 'IHDR') {
      return { format: 'png', width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
    }
    if (data[0] === 0xff && data[1] === 0xd8) return jpegSize(data);
    if (data.toString('latin1', 0, 4) === 'GIF8') return gifSize(data);
    if (data.toString('latin1', 0, 2) === 'BM') return bmpSize(data);
    const order = data.toString('latin1', 0, 4);
    if (order === 'II*\0' || order === 'MM\0*') return tiffSize(data, order === 'II*\0');
    if (data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return webpSize(data);
  } catch (err) {
    if (err instanceof RangeError) return undefined; // a header cut short
    throw err;
  }
  return undefined;
}

/**
 * Every frame header (SOF0–SOF15 but DHT, JPG and DAC) of the file, the largest kept: a decoder takes the last one it
 * meets, so a small first frame must not hide a huge one. Entropy-coded data is skipped up to the next marker.
 */
function jpegSize(data: Buffer): ImageSize | undefined {
  let width = 0;
  let height = 0;
  let i = 2;
  while (i + 4 <= data.length) {
    if (data[i] !== 0xff) {
      i += 1;
      continue;
    }
    const marker = data[i + 1]!;
    if (marker === 0xff || marker === 0x00 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      i += marker === 0xff ? 1 : 2;
      continue;
    }
    if (marker === 0xd9) break;
    const length = data.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const h = data.readUInt16BE(i + 5);
      const w = data.readUInt16BE(i + 7);
      if (w * h > width * height || w > width || h > height) {
        width = Math.max(width, w);
        height = Math.max(height, h);
      }
    }
    i += 2 + length;
  }
  return width > 0 || height > 0 ? { format: 'jpeg', width, height } : undefined;
}

/** The logical screen, grown by any frame that reaches past it (a decoder draws frames at their own size). */
function gifSize(data: Buffer): ImageSize {
  let width = data.readUInt16LE(6);
  let height = data.readUInt16LE(8);
  let i = 13;
  if (data[10]! & 0x80) i += 3 * (1 << ((data[10]! & 0x07) + 1));
  while (i < data.length) {
    const block = data[i]!;
    if (block === 0x3b) break;
    if (block === 0x21) {
      i += 2;
      while (i < data.length && data[i] !== 0) i += data[i]! + 1;
      i += 1;
      continue;
    }
    if (block !== 0x2c) break;
    width = Math.max(width, data.readUInt16LE(i + 1) + data.readUInt16LE(i + 5));
    height = Math.max(height, data.readUInt16LE(i + 3) + data.readUInt16LE(i + 7));
    const packed = data[i + 9]!;
    i += 10;
    if (packed & 0x80) i += 3 * (1 << ((packed & 0x07) + 1));
    i += 1; // LZW minimum code size
    while (i < data.length && data[i] !== 0) i += data[i]! + 1;
    i += 1;
  }
  return { format: 'gif', width, height };
}

function bmpSize(data: Buffer): ImageSize {
  const headerSize = data.readUInt32LE(14);
  if (headerSize === 12) return { format: 'bmp', width: data.readUInt16LE(18), height: data.readUInt16LE(20) };
  return { format: 'bmp', width: Math.abs(data.readInt32LE(18)), height: Math.abs(data.readInt32LE(22)) };
}

/** directories a TIFF may chain (pages); one with more, or whose chain loops, is not taken for a readable image */
const MAX_TIFF_PAGES = 256;

/**
 * ImageWidth (256) and ImageLength (257) of the first directory, and the pixels of every directory in the chain: a
 * decoder (jimp's utif) decodes all pages, so a small first page must not hide large ones.
 */
function tiffSize(data: Buffer, little: boolean): ImageSize | undefined {
  const u16 = (at: number) => (little ? data.readUInt16LE(at) : data.readUInt16BE(at));
  const u32 = (at: number) => (little ? data.readUInt32LE(at) : data.readUInt32BE(at));
  const seen = new Set<number>();
  const pages: Array<{ width: number; height: number }> = [];
  for (let directory = u32(4); directory !== 0; ) {
    if (seen.has(directory) || pages.length === MAX_TIFF_PAGES) return undefined;
    seen.add(directory);
    const entries = u16(directory);
    const page = { width: 0, height: 0 };
    for (let n = 0; n < entries; n += 1) {
      const at = directory + 2 + n * 12;
      const tag = u16(at);
      if (tag !== 256 && tag !== 257) continue;
      const value = u16(at + 2) === 3 ? u16(at + 8) : u32(at + 8);
      if (tag === 256) page.width = value;
      else page.height = value;
    }
    pages.push(page);
    directory = u32(directory + 2 + entries * 12);
  }
  const [first] = pages;
  if (!first || first.width === 0 || first.height === 0) return undefined;
  if (pages.length === 1) return { format: 'tiff', ...first };
  const pixels = pages.reduce((sum, page) => sum + page.width * page.height, 0);
  return { format: 'tiff', ...first, pages: pages.length, pixels };
}

function webpSize(data: Buffer): ImageSize | undefined {
  const chunk = data.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { format: 'webp', width: data.readUIntLE(24, 3) + 1, height: data.readUIntLE(27, 3) + 1 };
  if (chunk === 'VP8L') {
    const bits = data.readUInt32LE(21);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ') return { format: 'webp', width: data.readUInt16LE(26) & 0x3fff, height: data.readUInt16LE(28) & 0x3fff };
  return undefined;
}
