// Setting a picture (the account's own or a group's): Baileys makes the 640×640 JPEG with jimp (its optional image
// library, loaded on first use; sharp is not shipped: a native binary downloaded at install). An image jimp cannot
// decode is the caller's mistake (400), not the network's.
import type { WASocket } from '@whiskeysockets/baileys';
import { GatewayError } from '../../errors.js';
import type { ImageInput } from '../types.js';

export async function updatePicture(sock: WASocket, jid: string, image: ImageInput): Promise<void> {
  try {
    await sock.updateProfilePicture(jid, image.data);
  } catch (err) {
    // the network's answers and a closed connection are Boom errors; the image library's are plain ones
    if ((err as { isBoom?: boolean }).isBoom) throw err;
    throw new GatewayError('VALIDATION_FAILED', `the picture could not be read as an image: ${(err as Error).message}`);
  }
}
