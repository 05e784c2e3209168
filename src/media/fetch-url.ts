// Downloads media from a user-supplied URL through the URL guard, with a byte limit checked while streaming and a timeout.
import type { Dispatcher } from 'undici';
import { GatewayError } from '../errors.js';

export interface FetchedMedia {
  data: Buffer;
  contentType?: string;
  filename?: string;
}

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
}

export async function fetchMediaUrl(dispatcher: Dispatcher, url: URL, limits: FetchLimits, field = '/url'): Promise<FetchedMedia> {
  const tooLarge = () =>
    new GatewayError('VALIDATION_FAILED', `${field.slice(1)}: the media is larger than ${limits.maxBytes / 1024 / 1024} MB`, [
      { path: field, message: `is larger than ${limits.maxBytes / 1024 / 1024} MB` },
    ]);
  const failed = (why: string) => new GatewayError('MEDIA_DOWNLOAD_FAILED', `could not download ${url.href}: ${why}`, [{ path: field, message: why }]);
  // read before any network call: a name that cannot be decoded refuses the URL instead of failing after the download
  const filename = filenameOf(url, field);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    let response: Dispatcher.ResponseData<unknown>;
    try {
      const { request } = await import('undici');
      response = await request(url, { method: 'GET', dispatcher, signal: controller.signal, maxRedirections: 0 } as Parameters<typeof import('undici').request>[1]);
    } catch (err) {
      if (controller.signal.aborted) throw failed(`timed out after ${limits.timeoutMs} ms`);
      const message = (err as Error).message;
      if ((err as { code?: string }).code === 'ERR_BLOCKED_TARGET' || /blocked address/.test(message)) {
        throw new GatewayError('MEDIA_URL_REJECTED', `Media URL rejected: ${message}`, [{ path: field, message }]);
      }
      throw failed(message);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      discard(response.body);
      throw failed(`the server answered HTTP ${response.statusCode}${response.statusCode >= 300 && response.statusCode < 400 ? ' (redirects are not followed)' : ''}`);
    }
    const declared = Number(response.headers['content-length']);
    const known = Number.isSafeInteger(declared) && declared >= 0 && response.headers['content-length'] !== '';
    if (known && declared > limits.maxBytes) {
      discard(response.body);
      throw tooLarge();
    }
    // one buffer for the whole file, never a list of chunks and then their concatenation (twice the file in memory); sized
    // by the declared length, else by the limit (its pages are taken from the system only as bytes arrive)
    const data = Buffer.allocUnsafeSlow(known ? declared : limits.maxBytes);
    let received = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        if (received + chunk.length > limits.maxBytes) {
          discard(response.body);
          throw tooLarge();
        }
        if (received + chunk.length > data.length) {
          discard(response.body);
          throw failed(`the server sent more than the ${declared} bytes it declared`);
        }
        chunk.copy(data, received);
        received += chunk.length;
      }
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw failed(controller.signal.aborted ? `timed out after ${limits.timeoutMs} ms` : (err as Error).message);
    }
    const type = response.headers['content-type'];
    return {
      // a download of unknown length far below the limit moves to a buffer of its size, so the large one can go
      data: received < data.length / 4 ? Buffer.from(data.subarray(0, received)) : data.subarray(0, received),
      contentType: typeof type === 'string' ? type : undefined,
      filename,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** The last path segment, percent-decoded; malformed percent-encoding (`%E0%A4%A`, `%zz`) is a 400 naming the field. */
function filenameOf(url: URL, field: string): string | undefined {
  const last = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last) || undefined;
  } catch {
    throw new GatewayError('VALIDATION_FAILED', `${field.slice(1)}: the URL's file name has malformed percent-encoding (${last.slice(0, 100)})`, [
      { path: field, message: 'has malformed percent-encoding in its path' },
    ]);
  }
}

/** Drops a response body and its connection; the abort error it then emits is expected and swallowed. */
export function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}
