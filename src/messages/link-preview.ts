// The preview of a text's first link (title, description, thumbnail), built by the gateway: the page and its image are
// fetched through the URL guard with a byte cap and one deadline, so no engine (Baileys' link-preview-js) fetches a page
// itself. A preview that cannot be built never stops the send: the text goes without it and the result says why.
// undici and htmlparser2 load on the first preview, not at daemon start; jimp only in the image worker.
import type { Dispatcher } from 'undici';
import { GatewayError } from '../errors.js';
import type { LinkPreview } from '../engine/types.js';
import { discard, fetchMediaUrl } from '../media/fetch-url.js';
import { renderJpeg } from '../media/image.js';
import { checkTargetUrl } from '../net/url-guard.js';
import { limited, type MediaSource } from './content.js';

/** How much of a page is read: the <head> with its meta tags comes first. */
export const PREVIEW_HTML_MAX_BYTES = 512 * 1024;
export const PREVIEW_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** one deadline for the page, its redirects and its image */
export const PREVIEW_TIMEOUT_MS = 8_000;
const MAX_REDIRECTS = 3;
const THUMBNAIL_MAX_SIDE = 192;
const TITLE_MAX = 300;
const DESCRIPTION_MAX = 1000;

/** What became of the preview of a send, reported in its result. */
export type PreviewOutcome = { status: 'sent'; url: string } | { status: 'failed'; url: string; reason: string };

/** The first http(s) URL of a text, without the punctuation that usually follows a link in a sentence. */
export function firstUrl(text: string): string | undefined {
  const match = /\bhttps?:\/\/[^\s<>"'`]+/i.exec(text);
  return match?.[0].replace(/[.,;:!?)\]}'"]+$/, '') || undefined;
}

/** Builds the preview of the first link of `text`; undefined outcome when the text has none. */
export async function buildLinkPreview(text: string, source: MediaSource, timeoutMs = PREVIEW_TIMEOUT_MS): Promise<{ preview?: LinkPreview; outcome?: PreviewOutcome }> {
  const url = firstUrl(text);
  if (!url) return {};
  const deadline = Date.now() + timeoutMs;
  try {
    const preview = await limited(source, async () => {
      const page = await fetchPage(url, source, deadline);
      const meta = await readMeta(page.html, page.url);
      const title = meta.title ?? meta.description?.slice(0, TITLE_MAX);
      if (!title) throw new PreviewFailure('the page has no title or description');
      const thumbnail = meta.image ? await thumbnailOf(meta.image, source, deadline).catch(() => undefined) : undefined;
      return { url, title, ...(meta.description ? { description: meta.description } : {}), ...(thumbnail ? { thumbnail } : {}) } satisfies LinkPreview;
    });
    return { preview, outcome: { status: 'sent', url } };
  } catch (err) {
    return { outcome: { status: 'failed', url, reason: reasonOf(err) } };
  }
}

class PreviewFailure extends Error {}

function reasonOf(err: unknown): string {
  if (err instanceof PreviewFailure || err instanceof GatewayError) return err.message;
  const code = (err as { code?: string }).code;
  if (code === 'ERR_BLOCKED_TARGET') return `the URL is refused by the URL policy: ${(err as Error).message}`;
  if (['AbortError', 'TimeoutError'].includes((err as Error).name) || code === 'UND_ERR_ABORTED') return 'the page did not answer in time';
  return `the page could not be fetched: ${(err as Error).message}`;
}

/** GET with redirects followed by hand (each target checked against the URL policy), the body read up to the cap. */
async function fetchPage(raw: string, source: MediaSource, deadline: number): Promise<{ html: string; url: URL }> {
  let url = checkTargetUrl(raw, source.urlPolicy, 'MEDIA_URL_REJECTED');
  for (let hop = 0; ; hop += 1) {
    const response = await get(url, source.dispatcher, deadline);
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      // a redirect's (small) body is read to its end, so its connection is reused rather than reset
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (hop >= MAX_REDIRECTS) throw new PreviewFailure(`more than ${MAX_REDIRECTS} redirects`);
      url = checkTargetUrl(new URL(location, url).href, source.urlPolicy, 'MEDIA_URL_REJECTED');
      continue;
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      discard(response.body);
      throw new PreviewFailure(`the page answered HTTP ${response.statusCode}`);
    }
    const type = String(response.headers['content-type'] ?? '');
    if (!/^(text\/html|application\/xhtml\+xml)\b/i.test(type)) {
      discard(response.body);
      throw new PreviewFailure(`the URL is not an HTML page (${type || 'no content type'})`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      const piece = chunk as Buffer;
      chunks.push(size + piece.length > PREVIEW_HTML_MAX_BYTES ? piece.subarray(0, PREVIEW_HTML_MAX_BYTES - size) : piece);
      size += piece.length;
      if (size >= PREVIEW_HTML_MAX_BYTES) {
        discard(response.body);
        break;
      }
    }
    return { html: Buffer.concat(chunks).toString('utf8'), url };
  }
}

/** One GET; a kept-alive connection the server closed meanwhile (reset) is retried once on a new one. */
async function get(url: URL, dispatcher: Dispatcher, deadline: number, retried = false): Promise<Dispatcher.ResponseData> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new PreviewFailure('the page did not answer in time');
  const { request } = await import('undici');
  try {
    return await request(url, {
      method: 'GET',
      dispatcher,
      signal: AbortSignal.timeout(remaining),
      headers: { accept: 'text/html,application/xhtml+xml', 'user-agent': 'Mozilla/5.0 (compatible; session-gateway link preview)' },
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (retried || (code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET')) throw err;
    return get(url, dispatcher, deadline, true);
  }
}

interface PageMeta {
  title?: string;
  description?: string;
  image?: URL;
}

/** og:/twitter: meta tags first, then <title> and the description meta. */
export async function readMeta(html: string, base: URL): Promise<PageMeta> {
  const { Parser } = await import('htmlparser2');
  const meta = new Map<string, string>();
  let titleText = '';
  let inTitle = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'title') inTitle = true;
        if (name !== 'meta') return;
        const key = (attrs.property ?? attrs.name ?? '').toLowerCase();
        if (key && attrs.content !== undefined && !meta.has(key)) meta.set(key, attrs.content);
      },
      ontext(text) {
        if (inTitle) titleText += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const clean = (value: string | undefined, max: number) => {
    const text = value?.replace(/\s+/g, ' ').trim();
    return text ? text.slice(0, max) : undefined;
  };
  const title = clean(meta.get('og:title') ?? meta.get('twitter:title') ?? titleText, TITLE_MAX);
  const description = clean(meta.get('og:description') ?? meta.get('twitter:description') ?? meta.get('description'), DESCRIPTION_MAX);
  const imageRef = meta.get('og:image') ?? meta.get('og:image:url') ?? meta.get('twitter:image');
  let image: URL | undefined;
  try {
    image = imageRef ? new URL(imageRef.trim(), base) : undefined;
  } catch {
    image = undefined;
  }
  return { ...(title ? { title } : {}), ...(description ? { description } : {}), ...(image && /^https?:$/.test(image.protocol) ? { image } : {}) };
}

/**
 * The page's image, fetched through the guard and scaled down to a small JPEG off the event loop (src/media/image.ts),
 * within the preview's deadline; an image past the pixel limit is refused before any decode.
 */
async function thumbnailOf(image: URL, source: MediaSource, deadline: number): Promise<Buffer> {
  const url = checkTargetUrl(image.href, source.urlPolicy, 'MEDIA_URL_REJECTED');
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new PreviewFailure('no time left for the image');
  const fetched = await fetchMediaUrl(source.dispatcher, url, { maxBytes: PREVIEW_IMAGE_MAX_BYTES, timeoutMs: remaining });
  return renderJpeg(fetched.data, { kind: 'fit', side: THUMBNAIL_MAX_SIDE, quality: 60 }, { timeoutMs: deadline - Date.now() });
}
