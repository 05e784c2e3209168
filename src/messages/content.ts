// Turns a validated send body into engine content: per-type rules and limits (SPEC §8), mentions, media from URL or base64.
import { readFile } from 'node:fs/promises';
import type { Dispatcher } from 'undici';
import { ValidationError } from '../errors.js';
import { jidUser, normalizeJid } from '../engine/jid.js';
import type { MediaKind, MessageType, OutgoingContent, StagedFile } from '../engine/types.js';
import { checkTargetUrl, type UrlPolicy } from '../net/url-guard.js';
import { fetchMediaUrl, fetchMediaUrlToFile, type FetchedFile, type FetchedMedia } from '../media/fetch-url.js';
import { safeFileName } from '../media/file-name.js';
import { ACCEPTED_MIME, baseMime, sniffMime } from '../media/mime.js';
import { decodeBase64Field, type StreamedBase64 } from '../media/base64.js';
import { refuseOversizedImage } from '../media/image.js';
import type { FetchLimiter } from '../media/fetch-limiter.js';
import type { Principal } from '../auth/scopes.js';

export const MEDIA_URL_MAX_BYTES = 50 * 1024 * 1024;
export const MEDIA_BASE64_MAX_BYTES = 70 * 1024 * 1024;
export const MEDIA_FETCH_TIMEOUT_MS = 60_000;
export const MAX_MENTIONS = 256;

/** The body fields that describe content (shared by the send route and the sandbox inbound route). */
export interface ContentFields {
  type: string;
  text?: string;
  linkPreview?: boolean;
  url?: string;
  /** text, or (a large body) already decoded while it streamed in */
  base64?: string | StreamedBase64;
  mimeType?: string;
  caption?: string;
  filename?: string;
  ptt?: boolean;
  pollTitle?: string;
  pollOptions?: string[];
  pollMultiSelect?: boolean;
  latitude?: number;
  longitude?: number;
  address?: string;
  name?: string;
  vcard?: string;
  mentions?: string[];
}

export const TYPE_ALIASES: Record<string, MessageType> = { audio: 'voice', document: 'file' };
export const MEDIA_KINDS: ReadonlySet<string> = new Set<string>(['image', 'video', 'voice', 'file', 'sticker']);

export const FIELDS_BY_TYPE: Record<MessageType, string[]> = {
  text: ['text', 'linkPreview'],
  image: ['url', 'base64', 'mimeType', 'caption'],
  video: ['url', 'base64', 'mimeType', 'caption'],
  voice: ['url', 'base64', 'mimeType', 'ptt'],
  file: ['url', 'base64', 'mimeType', 'caption', 'filename'],
  sticker: ['url', 'base64', 'mimeType'],
  poll: ['pollTitle', 'pollOptions', 'pollMultiSelect'],
  location: ['latitude', 'longitude', 'address', 'name'],
  contact: ['vcard'],
};
export const CONTENT_FIELDS: ReadonlySet<string> = new Set(Object.values(FIELDS_BY_TYPE).flat());

export function canonicalType(type: string): MessageType {
  return TYPE_ALIASES[type] ?? (type as MessageType);
}

/** Checks everything that needs no network: run before answering 202 to an async send. */
export function checkContentFields(body: ContentFields): MessageType {
  const type = canonicalType(body.type);
  const allowed = new Set(FIELDS_BY_TYPE[type]);
  for (const field of Object.keys(body)) {
    if (CONTENT_FIELDS.has(field) && !allowed.has(field)) {
      throw ValidationError.field(`/${field}`, `is not used by ${body.type} messages`);
    }
  }
  if (type === 'text' && body.text === undefined) throw ValidationError.field('/text', 'is required for text messages');
  if (MEDIA_KINDS.has(type)) {
    if ((body.url === undefined) === (body.base64 === undefined)) {
      throw new ValidationError(`${body.type} messages need exactly one of url or base64`, [
        { path: body.url === undefined ? '/url' : '/base64', message: 'exactly one of url or base64 is required' },
      ]);
    }
    if (type === 'file' && body.filename === undefined) throw ValidationError.field('/filename', 'is required for file messages');
  }
  if (type === 'poll') {
    if (body.pollTitle === undefined) throw ValidationError.field('/pollTitle', 'is required for poll messages');
    if (body.pollOptions === undefined) throw ValidationError.field('/pollOptions', 'is required for poll messages');
    if (new Set(body.pollOptions.map((o) => o.trim())).size !== body.pollOptions.length) {
      throw ValidationError.field('/pollOptions', 'must not repeat an option');
    }
  }
  if (type === 'location' && (body.latitude === undefined || body.longitude === undefined)) {
    throw ValidationError.field(body.latitude === undefined ? '/latitude' : '/longitude', 'is required for location messages');
  }
  if (type === 'contact') {
    if (body.vcard === undefined) throw ValidationError.field('/vcard', 'is required for contact messages');
    vcardDisplayName(body.vcard);
  }
  if (body.mentions) checkMentions(body.mentions, type === 'text' ? body.text : body.caption);
  return type;
}

/** Mention JIDs normalised; each must appear in the text as @<number>. */
export function checkMentions(mentions: string[], text: string | undefined): string[] {
  if (mentions.length > MAX_MENTIONS) throw ValidationError.field('/mentions', `must have at most ${MAX_MENTIONS} items`);
  return mentions.map((raw, i) => {
    const jid = normalizeJid(raw);
    if (!jid) throw ValidationError.field(`/mentions/${i}`, 'is not a valid JID or phone number');
    if (!text || !text.includes(`@${jidUser(jid)}`)) {
      throw ValidationError.field(`/mentions/${i}`, `must also appear in the text as @${jidUser(jid)}`);
    }
    return jid;
  });
}

/** vCard 3.0: BEGIN/VERSION:3.0/FN/END; returns the FN for the message's display name. */
export function vcardDisplayName(vcard: string): string {
  const lines = vcard.trim().split(/\r?\n/).map((l) => l.trim());
  const fail = (why: string) => {
    throw ValidationError.field('/vcard', `is not a valid vCard 3.0: ${why}`);
  };
  if (lines[0]?.toUpperCase() !== 'BEGIN:VCARD') fail('it must start with BEGIN:VCARD');
  if (lines[lines.length - 1]?.toUpperCase() !== 'END:VCARD') fail('it must end with END:VCARD');
  if (!lines.some((l) => l.toUpperCase() === 'VERSION:3.0')) fail('VERSION:3.0 is missing');
  const fn = lines.find((l) => /^FN[;:]/i.test(l));
  if (!fn) fail('FN (the display name) is missing');
  return fn!.slice(fn!.indexOf(':') + 1).trim() || fail('FN is empty')!;
}

export interface MediaSource {
  urlPolicy: UrlPolicy;
  dispatcher: Dispatcher;
  /** the daemon-wide bound on concurrent URL downloads */
  limiter?: FetchLimiter;
  /** whose downloads these are, for the limiter's quotas (forCaller) */
  holder?: Principal;
}

/** The source for one caller's downloads: they count towards that caller's share of the limiter. */
export function forCaller(media: MediaSource, caller: Principal | undefined): MediaSource {
  return caller ? { ...media, holder: caller } : media;
}

/** Runs a URL download within the source's concurrency bound. */
export function limited<T>(media: MediaSource, work: () => Promise<T>): Promise<T> {
  return media.limiter ? media.limiter.run(work, media.holder) : work();
}

/**
 * Builds engine content, downloading or decoding media; runs after checkContentFields. With `staging`, a URL's media is
 * downloaded into that file instead of memory (the caller discards it if no media record adopts it).
 */
export async function buildContent(body: ContentFields, media: MediaSource, staging?: StagedFile): Promise<OutgoingContent> {
  const type = canonicalType(body.type);
  switch (type) {
    case 'text':
      return { type, text: body.text! };
    case 'poll':
      return { type, title: body.pollTitle!, options: body.pollOptions!, multiSelect: body.pollMultiSelect ?? false };
    case 'location':
      return { type, latitude: body.latitude!, longitude: body.longitude!, ...(body.address ? { address: body.address } : {}), ...(body.name ? { name: body.name } : {}) };
    case 'contact':
      return { type, vcard: body.vcard!, displayName: vcardDisplayName(body.vcard!) };
    default: {
      const kind = type as MediaKind;
      const loaded = body.url !== undefined ? await fromUrl(body.url, media, staging) : fromBase64(body.base64!);
      const bytes = 'file' in loaded ? { file: loaded.file, size: loaded.size } : { data: loaded.data, size: loaded.data.length };
      const head = 'file' in loaded ? loaded.head : loaded.data.subarray(0, 16);
      const field = body.url !== undefined ? '/url' : '/base64';
      const mimeType = resolveMime(kind, head, body.mimeType ?? loaded.contentType, field);
      // an engine may decode a picture itself (Baileys makes an image's thumbnail with jimp, on the event loop)
      if (kind === 'image' || kind === 'sticker') refuseOversizedImage('file' in loaded ? await readFile(loaded.file.path) : loaded.data, field);
      const filename = safeFileName(body.filename ?? loaded.filename);
      return {
        type: kind,
        media: { ...bytes, mimeType, ...(filename ? { filename } : {}) },
        ...(body.caption !== undefined ? { caption: body.caption } : {}),
        ...(kind === 'voice' ? { ptt: body.ptt ?? false } : {}),
      };
    }
  }
}

async function fromUrl(raw: string, media: MediaSource, staging: StagedFile | undefined): Promise<FetchedMedia | FetchedFile> {
  const url = checkTargetUrl(raw, media.urlPolicy, 'MEDIA_URL_REJECTED');
  const limits = { maxBytes: MEDIA_URL_MAX_BYTES, timeoutMs: MEDIA_FETCH_TIMEOUT_MS };
  return limited<FetchedMedia | FetchedFile>(media, () => (staging ? fetchMediaUrlToFile(media.dispatcher, url, limits, staging) : fetchMediaUrl(media.dispatcher, url, limits)));
}

function fromBase64(raw: string | StreamedBase64): { data: Buffer; contentType?: string; filename?: undefined } {
  return decodeBase64Field(raw, { mixedAlphabets: false, maxBytes: MEDIA_BASE64_MAX_BYTES, tooLarge: 'the media is larger than 70 MB' });
}

function resolveMime(kind: MediaKind, head: Buffer, declared: string | undefined, field: string): string {
  const sniffed = sniffMime(head);
  const declaredBase = declared ? baseMime(declared) : undefined;
  const mime = sniffed ?? (declaredBase && declaredBase !== 'application/octet-stream' ? declaredBase : undefined);
  const accepted = ACCEPTED_MIME[kind];
  if (!accepted.types) return mime ?? declaredBase ?? 'application/octet-stream';
  if (!mime || !accepted.types.includes(mime)) {
    throw ValidationError.field(field, `must be ${accepted.label} for ${kind} messages (got ${mime ?? 'an unrecognised type'})`);
  }
  return kind === 'voice' && mime === 'audio/ogg' ? 'audio/ogg; codecs=opus' : mime;
}
