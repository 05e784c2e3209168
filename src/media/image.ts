// Decoding images (link-preview thumbnails, profile and group pictures, later the thumbnails of sent images): the
// dimensions are read from the header first and an image past IMAGE_MAX_PIXELS is refused without a decode; the decode
// itself (jimp, synchronous) runs in a worker thread with memory limits and a deadline, never on the event loop.
// (A 48 KB PNG declaring 20000×20000 px took 1.8 GB and 50 s of the event loop when jimp decoded it in the daemon.)
import { Worker } from 'node:worker_threads';
import { GatewayError } from '../errors.js';
import { readImageSize, type ImageSize } from './image-size.js';

/** the most pixels an image may have to be decoded: 16 megapixels (a 4096×4096 image; 64 MB as RGBA) */
export const IMAGE_MAX_PIXELS = 16_000_000;

/** What the worker makes of an image: always a JPEG. */
export type ImageOperation =
  /** scaled to fit a `side`×`side` box, proportions kept */
  | { kind: 'fit'; side: number; quality: number }
  /** cropped to the square at its top left corner, then scaled to `side`×`side` */
  | { kind: 'square'; side: number; quality: number };

/** The header's dimensions when the image may be decoded; 400 IMAGE_TOO_LARGE past the limit, 400 when no header is read. */
export function checkImageSize(data: Buffer, field = '/base64', maxPixels = IMAGE_MAX_PIXELS): ImageSize {
  const size = readImageSize(data);
  if (!size || size.width === 0 || size.height === 0) {
    throw new GatewayError('VALIDATION_FAILED', `${field.replace(/^\//, '')}: the image's dimensions could not be read`, [{ path: field, message: 'is not a readable image' }]);
  }
  if (size.width * size.height > maxPixels) {
    const message = `the image is ${size.width}×${size.height} px; at most ${maxPixels / 1_000_000} megapixels are accepted`;
    throw new GatewayError('IMAGE_TOO_LARGE', `${field.replace(/^\//, '')}: ${message}`, [{ path: field, message }]);
  }
  return size;
}

export class ImageDecodeError extends Error {
  override name = 'ImageDecodeError';
}

/** the worker's heap: jimp's pixels live in Buffers (bounded by IMAGE_MAX_PIXELS), its decoders' state on the heap */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
const WORKER_URL = new URL('./image-worker.js', import.meta.url);

/**
 * Decodes `data` in a worker and returns the JPEG `operation` makes of it. Refuses an image past the limit before any
 * decode (checkImageSize); rejects with ImageDecodeError when the image cannot be decoded, exhausts the worker's memory
 * or takes longer than `timeoutMs` (the worker is then terminated).
 */
export async function renderJpeg(data: Buffer, operation: ImageOperation, options: { timeoutMs: number; field?: string }): Promise<Buffer> {
  checkImageSize(data, options.field);
  if (options.timeoutMs <= 0) throw new ImageDecodeError('no time left to decode the image');
  const worker = new Worker(WORKER_URL, { workerData: { data, operation }, resourceLimits: WORKER_LIMITS, stdout: true, stderr: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      timer = setTimeout(() => reject(new ImageDecodeError(`the image was not decoded within ${options.timeoutMs} ms`)), options.timeoutMs);
      worker.once('message', (answer: { jpeg?: Uint8Array; error?: string }) => {
        if (answer.jpeg) resolve(Buffer.from(answer.jpeg.buffer, answer.jpeg.byteOffset, answer.jpeg.byteLength));
        else reject(new ImageDecodeError(answer.error ?? 'the image could not be decoded'));
      });
      worker.once('error', (err) => reject(new ImageDecodeError(`the image could not be decoded: ${err.message}`)));
      worker.once('exit', (code) => reject(new ImageDecodeError(`the image decoder stopped (exit code ${code})`)));
    });
  } finally {
    clearTimeout(timer);
    void worker.terminate();
  }
}
