// Media download on Baileys: decrypting streams from the CDN (media-download.ts), and the re-upload request when a file expired.
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { GatewayError, NetworkError } from '../../errors.js';
import type { BaileysMediaRef } from './content.js';
import { errorCode, withTimeout, type SessionContext } from './context.js';
import { TtlCache } from './cache.js';
import { DEFAULT_DOWNLOAD_SETTINGS, downloadMedia, type MediaDownloadSettings } from './media-download.js';

const REUPLOAD_TIMEOUT_MS = 30_000;
const GONE = new Set([404, 410]);

const MESSAGE_FIELD: Record<BaileysMediaRef['mediaType'], keyof proto.IMessage> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
};

export class BaileysMedia {
  /** new CDN paths after a re-upload, by media key (the media record keeps the old one) */
  private readonly refreshed = new TtlCache(14 * 24 * 3600_000, 5_000);

  constructor(
    private readonly ctx: SessionContext,
    private readonly settings: MediaDownloadSettings = DEFAULT_DOWNLOAD_SETTINGS,
  ) {}

  /**
   * The decrypted bytes. A 404/410 from the CDN means the file expired: the phone is asked to upload it again
   * (updateMediaMessage; it must be online and still have it), then the download is retried once; if that fails
   * too, MEDIA_EXPIRED. Baileys' own automatic re-upload checks a field its errors do not have, so it is done here.
   */
  async download(input: unknown): Promise<NodeJS.ReadableStream> {
    const ref = asRef(input);
    const current = { ...ref, ...(this.refreshed.get<Pick<BaileysMediaRef, 'directPath' | 'url'>>(ref.mediaKey) ?? {}) };
    try {
      return await this.fetch(current);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      if (!GONE.has(errorCode(err) ?? 0)) throw new NetworkError(`media download failed: ${(err as Error).message}`, err, 'MEDIA_DOWNLOAD_FAILED');
    }
    const renewed = await this.reupload(current);
    try {
      return await this.fetch(renewed);
    } catch (err) {
      throw new NetworkError(`the media expired on the network and its re-upload could not be downloaded: ${(err as Error).message}`, err, 'MEDIA_EXPIRED');
    }
  }

  private async fetch(ref: BaileysMediaRef): Promise<NodeJS.ReadableStream> {
    return downloadMedia(ref, Buffer.from(ref.mediaKey, 'base64'), ref.mediaType, this.settings, this.ctx.dispatcher);
  }

  private async reupload(ref: BaileysMediaRef): Promise<BaileysMediaRef> {
    const sock = this.ctx.current();
    if (!sock) throw new GatewayError('MEDIA_EXPIRED', 'the media expired on the network; connect the session so the phone can be asked to upload it again');
    const media = { mediaKey: Buffer.from(ref.mediaKey, 'base64'), directPath: ref.directPath, url: ref.url };
    const message: WAMessage = { key: ref.key, message: { [MESSAGE_FIELD[ref.mediaType]]: media } };
    try {
      const updated = await withTimeout(sock.updateMediaMessage(message), 'media re-upload', REUPLOAD_TIMEOUT_MS);
      const content = (updated.message?.[MESSAGE_FIELD[ref.mediaType]] ?? media) as { directPath?: string | null; url?: string | null };
      const renewed = { ...ref, ...(content.directPath ? { directPath: content.directPath } : {}), ...(content.url ? { url: content.url } : {}) };
      this.refreshed.set(ref.mediaKey, { directPath: renewed.directPath, url: renewed.url });
      return renewed;
    } catch (err) {
      throw new NetworkError(`the media expired on the network and the phone could not upload it again: ${(err as Error).message}`, err, 'MEDIA_EXPIRED');
    }
  }
}

function asRef(input: unknown): BaileysMediaRef {
  const ref = input as Partial<BaileysMediaRef> | undefined;
  if (!ref || typeof ref.mediaKey !== 'string' || !ref.mediaType || !ref.key || !(ref.mediaType in MESSAGE_FIELD)) {
    throw new GatewayError('MEDIA_NOT_FOUND', 'this media was not received by the Baileys engine');
  }
  return ref as BaileysMediaRef;
}
