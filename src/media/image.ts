// Decoding images (link-preview thumbnails, profile and group pictures, the thumbnails of sent images): the
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
  refuseOversized(size, field, maxPixels);
  return size;
}

/**
 * 400 IMAGE_TOO_LARGE when the header declares more than `maxPixels`, before the image is handed on; an image whose
 * header cannot be read passes here (whatever decodes it later checks again, strictly: renderJpeg).
 */
export function refuseOversizedImage(data: Buffer, field = '/base64', maxPixels = IMAGE_MAX_PIXELS): void {
  const size = readImageSize(data);
  if (size) refuseOversized(size, field, maxPixels);
}

function refuseOversized(size: ImageSize, field: string, maxPixels: number): void {
  if ((size.pixels ?? size.width * size.height) > maxPixels) {
    const dimensions = size.pages ? `${size.pages} pages of ${size.pixels} px in all` : `${size.width}×${size.height} px`;
    const message = `the image is ${dimensions}; at most ${maxPixels / 1_000_000} megapixels are accepted`;
    throw new GatewayError('IMAGE_TOO_LARGE', `${field.replace(/^\//, '')}: ${message}`, [{ path: field, message }]);
  }
}

export class ImageDecodeError extends Error {
  override name = 'ImageDecodeError';
}

/** the worker's heap: jimp's pixels live in Buffers (bounded by IMAGE_MAX_PIXELS), its decoders' state on the heap */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
const WORKER_URL = new URL('./image-worker.js', import.meta.url);
/** decodes at once in the whole daemon; more wait for a worker (within their own deadline) */
const MAX_WORKERS = 2;
/** a worker idle this long is ended (one with jimp loaded holds tens of MB) */
const IDLE_MS = 30_000;

/**
 * Decodes `data` in a worker and returns the JPEG `operation` makes of it. Refuses an image past the limit before any
 * decode (checkImageSize); rejects with ImageDecodeError when the image cannot be decoded, exhausts the worker's memory
 * or is not done within `timeoutMs`, the wait for a worker included (a worker still decoding then is terminated).
 */
export async function renderJpeg(data: Buffer, operation: ImageOperation, options: { timeoutMs: number; field?: string }): Promise<Buffer> {
  checkImageSize(data, options.field);
  if (options.timeoutMs <= 0) throw new ImageDecodeError('no time left to decode the image');
  return decoders.run(data, operation, options.timeoutMs);
}

/**
 * Up to MAX_WORKERS workers, each decoding one image at a time and kept for the next (loading jimp takes longer than a
 * thumbnail): a worker that fails or overruns a deadline is ended, an idle one after IDLE_MS. Workers never keep the
 * process alive (unref); a decode's deadline timer does while it runs.
 */
class DecoderPool {
  private readonly idle: Worker[] = [];
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  private readonly waiting: Array<(worker: Worker) => void> = [];
  private workers = 0;

  run(data: Buffer, operation: ImageOperation, timeoutMs: number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      let worker: Worker | undefined;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const timer = setTimeout(() => {
        settle(() => reject(new ImageDecodeError(`the image was not decoded within ${timeoutMs} ms`)));
        if (worker) this.end(worker);
      }, timeoutMs);
      this.acquire((assigned) => {
        if (settled) return this.release(assigned); // the deadline passed while it waited
        worker = assigned;
        const done = (answer: { jpeg?: Uint8Array; error?: string }) => {
          assigned.off('exit', stopped);
          this.release(assigned);
          settle(() => (answer.jpeg ? resolve(Buffer.from(answer.jpeg.buffer, answer.jpeg.byteOffset, answer.jpeg.byteLength)) : reject(new ImageDecodeError(answer.error ?? 'the image could not be decoded'))));
        };
        // out of memory, or terminated at a deadline: 'error' (when there is one) comes first, then 'exit'
        let failure = 'the image decoder stopped';
        const failed = (err: Error) => (failure = `the image could not be decoded: ${err.message}`);
        const stopped = () => {
          assigned.off('message', done);
          assigned.off('error', failed);
          settle(() => reject(new ImageDecodeError(failure)));
        };
        assigned.once('message', done);
        assigned.on('error', failed);
        assigned.once('exit', stopped);
        assigned.postMessage({ data, operation });
      });
    });
  }

  private acquire(take: (worker: Worker) => void): void {
    const idle = this.idle.pop();
    if (idle) {
      clearTimeout(this.idleTimers.get(idle));
      this.idleTimers.delete(idle);
      return take(idle);
    }
    if (this.workers < MAX_WORKERS) return take(this.spawn());
    this.waiting.push(take);
  }

  private spawn(): Worker {
    this.workers += 1;
    const worker = new Worker(WORKER_URL, { resourceLimits: WORKER_LIMITS, stdout: true, stderr: true });
    worker.unref();
    worker.once('exit', () => this.forget(worker));
    return worker;
  }

  /** A worker done with its image: to the next waiting decode, or idle. */
  private release(worker: Worker): void {
    worker.removeAllListeners('error');
    const next = this.waiting.shift();
    if (next) return next(worker);
    this.idle.push(worker);
    const timer = setTimeout(() => this.end(worker), IDLE_MS);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }

  private end(worker: Worker): void {
    void worker.terminate();
  }

  /** A worker that exited (ended, failed, out of memory): its place goes to a new worker when decodes wait. */
  private forget(worker: Worker): void {
    this.workers -= 1;
    clearTimeout(this.idleTimers.get(worker));
    this.idleTimers.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }
}

const decoders = new DecoderPool();
