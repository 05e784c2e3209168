// The worker of src/media/image.ts: decodes one image with jimp, applies the operation, answers with the JPEG.
import { parentPort, workerData } from 'node:worker_threads';
import type { ImageOperation } from './image.js';

const { data, operation } = workerData as { data: Uint8Array; operation: ImageOperation };

try {
  const { Jimp, ResizeStrategy } = await import('jimp');
  const image = await Jimp.read(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  if (operation.kind === 'square') {
    const side = Math.min(image.width, image.height);
    image.crop({ x: 0, y: 0, w: side, h: side }).resize({ w: operation.side, h: operation.side, mode: ResizeStrategy.BILINEAR });
  } else {
    image.scaleToFit({ w: operation.side, h: operation.side });
  }
  const jpeg = await image.getBuffer('image/jpeg', { quality: operation.quality });
  parentPort!.postMessage({ jpeg });
} catch (err) {
  parentPort!.postMessage({ error: `the image could not be decoded: ${(err as Error).message}` });
}
