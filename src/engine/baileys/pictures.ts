// Setting a picture (the account's own, a group's or a channel's): the 640×640 JPEG is made off the event loop
// (src/media/image.ts: jimp in a worker, the image's dimensions checked first); Baileys then re-encodes that small
// square with jimp, cheaply. An image that cannot be decoded is the caller's mistake (400), not the network's.
import type { WASocket } from '@whiskeysockets/baileys';
import { GatewayError } from '../../errors.js';
import { ImageDecodeError, renderJpeg } from '../../media/image.js';
import type { ImageInput } from '../types.js';

const PICTURE_SIDE = 640;
const PICTURE_DECODE_TIMEOUT_MS = 30_000;

export async function updatePicture(sock: WASocket, jid: string, image: ImageInput): Promise<void> {
  const square = await squarePicture(image);
  try {
    await sock.updateProfilePicture(jid, square);
  } catch (err) {
    // the network's answers and a closed connection are Boom errors; the image library's are plain ones
    if ((err as { isBoom?: boolean }).isBoom) throw err;
    throw new GatewayError('VALIDATION_FAILED', `the picture could not be read as an image: ${(err as Error).message}`);
  }
}

/** The picture as the square JPEG WhatsApp shows, decoded in a worker. */
export async function squarePicture(image: ImageInput): Promise<Buffer> {
  try {
    return await renderJpeg(image.data, { kind: 'square', side: PICTURE_SIDE, quality: 90 }, { timeoutMs: PICTURE_DECODE_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof ImageDecodeError) throw new GatewayError('VALIDATION_FAILED', `the picture could not be read as an image: ${err.message}`);
    throw err;
  }
}
