// Pictures for groups and channels: fetched through the URL guard or decoded from base64, checked to be JPEG or PNG,
// size-limited in bytes and in pixels (read from the header: an image past the limit is refused before any decode).
import { ValidationError } from '../errors.js';
import type { ImageInput } from '../engine/types.js';
import { fetchMediaUrl } from '../media/fetch-url.js';
import { refuseOversizedImage } from '../media/image.js';
import { sniffMime } from '../media/mime.js';
import { decodeBase64Field, type StreamedBase64 } from '../media/base64.js';
import { limited, type MediaSource } from '../messages/content.js';
import { checkTargetUrl } from '../net/url-guard.js';

export const PICTURE_MAX_BYTES = 5 * 1024 * 1024;
const PICTURE_FETCH_TIMEOUT_MS = 30_000;
const PICTURE_TYPES = ['image/jpeg', 'image/png'];

export async function loadPicture(input: { url?: string; base64?: string | StreamedBase64 }, source: MediaSource, urlField = '/url'): Promise<ImageInput> {
  if ((input.url === undefined) === (input.base64 === undefined)) {
    throw new ValidationError('send exactly one of url or base64', [{ path: input.url === undefined ? '/url' : '/base64', message: 'exactly one of url or base64 is required' }]);
  }
  if (input.url !== undefined) {
    const url = checkTargetUrl(input.url, source.urlPolicy, 'MEDIA_URL_REJECTED');
    const fetched = await limited(source, () => fetchMediaUrl(source.dispatcher, url, { maxBytes: PICTURE_MAX_BYTES, timeoutMs: PICTURE_FETCH_TIMEOUT_MS }, urlField));
    const mimeType = pictureType(fetched.data, urlField);
    refuseOversizedImage(fetched.data, urlField);
    return { data: fetched.data, mimeType, sourceUrl: url.href };
  }
  const { data } = decodeBase64Field(input.base64!, { mixedAlphabets: true, maxBytes: PICTURE_MAX_BYTES, tooLarge: `a picture may be at most ${PICTURE_MAX_BYTES / 1024 / 1024} MB` });
  const mimeType = pictureType(data, '/base64');
  refuseOversizedImage(data, '/base64');
  return { data, mimeType };
}

function pictureType(data: Buffer, field: string): string {
  const mime = sniffMime(data.subarray(0, 16));
  if (!mime || !PICTURE_TYPES.includes(mime)) throw ValidationError.field(field, `must be a JPEG or PNG image (got ${mime ?? 'an unrecognised type'})`);
  return mime;
}
