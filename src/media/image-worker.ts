// The worker of src/media/image.ts: decodes one image at a time with jimp (loaded once), applies the operation,
// answers with the JPEG or the error.
import { parentPort } from 'node:worker_threads';
import type { ImageOperation } from './image.js';

const { Jimp, ResizeStrategy } = await import('jimp');

parentPort!.on('message', ({ data, operation }: { data: Uint8Array; operation: ImageOperation }) => {
  void render(Buffer.from(data.buffer, data.byteOffset, data.byteLength), operation).then(
    (jpeg) => parentPort!.postMessage({ jpeg }),
    (err: unknown) => parentPort!.postMessage({ error: `the image could not be decoded: ${(err as Error).message}` }),
  );
});

async function render(data: Buffer, operation: ImageOperation): Promise<Buffer> {
  const image = await Jimp.read(data);
  if (operation.kind === 'square') {
    const side = Math.min(image.width, image.height);
    image.crop({ x: 0, y: 0, w: side, h: side }).resize({ w: operation.side, h: operation.side, mode: ResizeStrategy.BILINEAR });
  } else {
    image.scaleToFit({ w: operation.side, h: operation.side });
  }
  return image.getBuffer('image/jpeg', { quality: operation.quality });
}
