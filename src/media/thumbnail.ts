// The thumbnail a sent image carries: WhatsApp shows it while the recipient's phone downloads the file (and in
// notifications); without one the recipient sees a grey box. About 100 px, a JPEG of at most 32 KB, made on the image
// workers (src/media/image.ts) under the same limits as every decode: the header is read first, an image over
// IMAGE_MAX_PIXELS is never decoded, the decode has a deadline and never runs on the event loop.
import { readFile } from 'node:fs/promises';
import { checkImageSize, renderJpeg } from './image.js';
import { readImageSize } from './image-size.js';

/** the longer side of a thumbnail, px */
export const THUMBNAIL_SIDE = 100;
/** WhatsApp's clients drop larger thumbnails */
export const THUMBNAIL_MAX_BYTES = 32 * 1024;
/** tried in turn until the JPEG fits THUMBNAIL_MAX_BYTES */
const QUALITIES = [60, 35, 15];
/** a bigger file goes without a thumbnail rather than being read into memory for one */
export const THUMBNAIL_SOURCE_MAX_BYTES = 32 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

export interface ImageThumbnail {
  jpeg: Buffer;
  /** the image's own dimensions (from its header), which WhatsApp uses to size the message before the download */
  width: number;
  height: number;
}

/** The thumbnail of an image in hand or on disk; rejects when none can be made (the caller sends without one). */
export async function imageThumbnail(source: { data: Buffer } | { path: string; size: number }): Promise<ImageThumbnail> {
  if ('path' in source && source.size > THUMBNAIL_SOURCE_MAX_BYTES) {
    throw new Error(`the image is larger than ${THUMBNAIL_SOURCE_MAX_BYTES / 1024 / 1024} MB`);
  }
  const data = 'data' in source ? source.data : await readFile(source.path);
  const { width, height } = checkImageSize(data);
  const deadline = Date.now() + TIMEOUT_MS;
  for (const quality of QUALITIES) {
    const jpeg = await renderJpeg(data, { kind: 'fit', side: THUMBNAIL_SIDE, quality }, { timeoutMs: deadline - Date.now() });
    if (jpeg.length <= THUMBNAIL_MAX_BYTES) return { jpeg, ...upright(width, height, jpeg) };
  }
  throw new Error(`no thumbnail within ${THUMBNAIL_MAX_BYTES / 1024} KB`);
}

/** The header's dimensions as shown: jimp turns a photo by its EXIF orientation, the header gives them unturned. */
function upright(width: number, height: number, thumbnail: Buffer): { width: number; height: number } {
  const shown = readImageSize(thumbnail);
  const turned = shown !== undefined && shown.width !== shown.height && width !== height && shown.width > shown.height !== width > height;
  return turned ? { width: height, height: width } : { width, height };
}
