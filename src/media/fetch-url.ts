// Downloads media from a user-supplied URL through the URL guard, with a byte limit checked while streaming and a timeout.
import { open } from 'node:fs/promises';
import type { Dispatcher } from 'undici';
import type { StagedFile } from '../engine/types.js';
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

/** A download written to a staged file: its size and first bytes (for sniffing the type) are all that is held. */
export interface FetchedFile {
  file: StagedFile;
  size: number;
  /** the first 16 bytes */
  head: Buffer;
  contentType?: string;
  filename?: string;
}

/** Downloads into one buffer (pictures, previews: what a decoder needs whole). */
export async function fetchMediaUrl(dispatcher: Dispatcher, url: URL, limits: FetchLimits, field = '/url'): Promise<FetchedMedia> {
  return download(dispatcher, url, limits, field, async (body, declared) => {
    // one buffer for the whole file, never a list of chunks and then their concatenation (twice the file in memory); sized
    // by the declared length, else by the limit (its pages are taken from the system only as bytes arrive)
    const data = Buffer.allocUnsafeSlow(declared ?? limits.maxBytes);
    let received = 0;
    for await (const chunk of body) {
      chunk.copy(data, received);
      received += chunk.length;
    }
    // a download of unknown length far below the limit moves to a buffer of its size, so the large one can go
    return { data: received < data.length / 4 ? Buffer.from(data.subarray(0, received)) : data.subarray(0, received) };
  });
}

/** Downloads into `staged` as the bytes arrive (a send's media): the file is never whole in memory. */
export async function fetchMediaUrlToFile(dispatcher: Dispatcher, url: URL, limits: FetchLimits, staged: StagedFile, field = '/url'): Promise<FetchedFile> {
  return download(dispatcher, url, limits, field, async (body) => {
    const head = Buffer.alloc(16);
    let size = 0;
    // a failure of our own disk (full, unwritable) is the daemon's, not the URL's: a 500 whose answer shows no path, with
    // the cause in the daemon's log
    const diskError = (cause: unknown) => Promise.reject(new GatewayError('INTERNAL', 'the download could not be written to the media store', undefined, { cause }));
    const file = await open(staged.path, 'wx', 0o600).catch(diskError);
    try {
      for await (const chunk of body) {
        if (size < head.length) chunk.copy(head, size, 0, Math.min(chunk.length, head.length - size));
        size += chunk.length;
        await file.write(chunk).catch(diskError);
      }
    } finally {
      await file.close();
    }
    return { file: staged, size, head: head.subarray(0, Math.min(size, head.length)) };
  });
}

/**
 * One GET through the guard with the limits: a status other than 2xx, a declared or actual size over the limit, more
 * bytes than declared, or the timeout each end it with a 4xx/5xx GatewayError naming the field. `sink` reads the body's
 * chunks (already checked against the limits) and returns what it made of them.
 */
async function download<T>(
  dispatcher: Dispatcher,
  url: URL,
  limits: FetchLimits,
  field: string,
  sink: (body: AsyncIterable<Buffer>, declared: number | undefined) => Promise<T>,
): Promise<T & { contentType?: string; filename?: string }> {
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
    const length = Number(response.headers['content-length']);
    const declared = Number.isSafeInteger(length) && length >= 0 && response.headers['content-length'] !== '' ? length : undefined;
    if (declared !== undefined && declared > limits.maxBytes) {
      discard(response.body);
      throw tooLarge();
    }
    const body = response.body;
    async function* checked(): AsyncGenerator<Buffer> {
      let received = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        received += chunk.length;
        if (received > limits.maxBytes) {
          discard(body);
          throw tooLarge();
        }
        if (declared !== undefined && received > declared) {
          discard(body);
          throw failed(`the server sent more than the ${declared} bytes it declared`);
        }
        yield chunk;
      }
    }
    let made: T;
    try {
      made = await sink(checked(), declared);
    } catch (err) {
      // whatever stopped the sink (a limit, our disk, the connection), the rest of the body is not read
      discard(body);
      if (err instanceof GatewayError) throw err;
      throw failed(controller.signal.aborted ? `timed out after ${limits.timeoutMs} ms` : (err as Error).message);
    }
    const type = response.headers['content-type'];
    return { ...made, contentType: typeof type === 'string' ? type : undefined, filename };
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
