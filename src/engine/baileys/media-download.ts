// Fetching an encrypted media file from WhatsApp's CDN. The message that names the file comes from a remote sender, who
// controls its `url` and `directPath`: Baileys' own download would fetch whatever host `url` names (plain http, any
// address, redirects followed, no deadline, no size limit). Here the host is always a WhatsApp media host, the path must be
// a path, the connection goes through the URL guard (or the session's proxy), redirects are refused, and one deadline
// and one byte cap cover the whole download.
import { createDecipheriv } from 'node:crypto';
import { pipeline, Transform, type Readable } from 'node:stream';
import { getMediaKeys } from '@whiskeysockets/baileys';
import { Agent, request, type Dispatcher } from 'undici';
import { GatewayError } from '../../errors.js';
import { createGuardedDispatcher } from '../../net/guarded-dispatcher.js';

export const DEFAULT_MEDIA_HOST = 'mmg.whatsapp.net';
const WHATSAPP_MEDIA_HOST = /^([a-z0-9-]+\.)*whatsapp\.net$/i;
/** a path on the media host: one leading slash, then no slash, backslash, whitespace or control character right away */
const DIRECT_PATH = /^\/[^/\\\s\x00-\x1f][^\s\\\x00-\x1f]*$/;
const WEB_ORIGIN = 'https://web.whatsapp.com';
const AES_BLOCK = 16;

type MediaType = Parameters<typeof getMediaKeys>[1];

export interface MediaDownloadSettings {
  /** `host[:port]` media servers trusted besides *.whatsapp.net (an emulator's): fetched without the URL guard */
  trustedHosts: string[];
  timeoutMs: number;
  maxBytes: number;
}

export const DEFAULT_DOWNLOAD_SETTINGS: MediaDownloadSettings = { trustedHosts: [], timeoutMs: 300_000, maxBytes: 2 * 1024 * 1024 * 1024 + 1024 * 1024 };

export interface MediaLocation {
  directPath?: string | null;
  url?: string | null;
}

/** An error carrying the CDN's HTTP status the way Baileys' errors do (`output.statusCode`), for the expiry check. */
export class CdnStatusError extends Error {
  readonly output: { statusCode: number };
  constructor(status: number) {
    super(`the media server answered HTTP ${status}`);
    this.output = { statusCode: status };
  }
}

const refused = (why: string) => new GatewayError('MEDIA_DOWNLOAD_FAILED', `media download refused: ${why}`);

/**
 * The URL to fetch: `directPath` on the host of `url` when that is a WhatsApp media host (or a trusted one), else on the
 * default host; without a directPath, `url` itself only when it is on such a host. `trusted` says the host is configured.
 */
export function mediaDownloadUrl(location: MediaLocation, trustedHosts: readonly string[]): { url: URL; trusted: boolean } {
  const allowed = (url: URL) => url.protocol === 'https:' && !url.username && !url.password && (trustedHosts.includes(url.host) || (WHATSAPP_MEDIA_HOST.test(url.hostname) && url.port === ''));
  let given: URL | undefined;
  if (location.url) {
    try {
      given = new URL(location.url);
    } catch {
      given = undefined;
    }
    if (given && !allowed(given)) given = undefined;
  }
  if (location.directPath) {
    if (!DIRECT_PATH.test(location.directPath)) throw refused('the message names no valid path on the media host');
    const host = given?.host ?? trustedHosts[0] ?? DEFAULT_MEDIA_HOST;
    const url = new URL(`https://${host}${location.directPath}`);
    if (url.host !== host) throw refused('the message names no valid path on the media host');
    return { url, trusted: trustedHosts.includes(host) };
  }
  if (!given) throw refused(location.url ? 'the message points at a host that is not a WhatsApp media host' : 'the message names no media location');
  return { url: given, trusted: trustedHosts.includes(given.host) };
}

let guarded: Dispatcher | undefined;
let trusted: Dispatcher | undefined;

/**
 * Fetches and decrypts one media file. `proxy` is the session's proxy dispatcher, when it has one (the proxy then decides
 * where connections go); otherwise WhatsApp hosts go through the URL guard and configured hosts through a plain agent.
 */
export async function downloadMedia(
  location: MediaLocation,
  mediaKey: Buffer,
  mediaType: MediaType,
  settings: MediaDownloadSettings,
  proxy: Dispatcher | undefined,
): Promise<Readable> {
  const { url, trusted: isTrusted } = mediaDownloadUrl(location, settings.trustedHosts);
  const dispatcher = proxy ?? (isTrusted ? (trusted ??= new Agent()) : (guarded ??= createGuardedDispatcher({ allowPrivateTargets: false })));
  const { cipherKey, iv } = await getMediaKeys(mediaKey, mediaType);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`the media download did not finish within ${settings.timeoutMs} ms`)), settings.timeoutMs);
  timer.unref();
  let response: Dispatcher.ResponseData<unknown>;
  try {
    response = await request(url, { method: 'GET', dispatcher, signal: controller.signal, headers: { Origin: WEB_ORIGIN }, maxRedirections: 0 } as Parameters<typeof request>[1]);
  } catch (err) {
    clearTimeout(timer);
    throw controller.signal.aborted ? (controller.signal.reason as Error) : err;
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    clearTimeout(timer);
    response.body.on('error', () => {});
    response.body.destroy();
    throw new CdnStatusError(response.statusCode);
  }
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > settings.maxBytes) {
    clearTimeout(timer);
    response.body.on('error', () => {});
    response.body.destroy();
    throw refused(`the file is larger than ${settings.maxBytes} bytes`);
  }
  return pipeline(response.body, capBytes(settings.maxBytes), decrypt(Buffer.from(cipherKey), Buffer.from(iv)), () => clearTimeout(timer));
}

function capBytes(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) callback(refused(`the file is larger than ${maxBytes} bytes`));
      else callback(null, chunk);
    },
  });
}

/** AES-256-CBC over whole blocks; the trailing 10-byte MAC never completes a block and is dropped (as Baileys does). */
function decrypt(cipherKey: Buffer, iv: Buffer): Transform {
  const aes = createDecipheriv('aes-256-cbc', cipherKey, iv);
  let rest: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const data = rest.length ? Buffer.concat([rest, chunk]) : chunk;
      const whole = data.length - (data.length % AES_BLOCK);
      rest = data.subarray(whole);
      try {
        callback(null, aes.update(data.subarray(0, whole)));
      } catch (err) {
        callback(err as Error);
      }
    },
    flush(callback) {
      try {
        callback(null, aes.final());
      } catch (err) {
        callback(err as Error);
      }
    },
  });
}
