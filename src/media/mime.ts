// Media types: sniffing by magic bytes, what each message type accepts, and file extensions.
import type { MediaKind } from '../engine/types.js';

const SIGNATURES: Array<{ mime: string; test: (b: Buffer) => boolean }> = [
  { mime: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/png', test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { mime: 'image/webp', test: (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' },
  { mime: 'image/gif', test: (b) => b.toString('latin1', 0, 4) === 'GIF8' },
  { mime: 'video/mp4', test: (b) => b.toString('latin1', 4, 8) === 'ftyp' && !/^(M4A|M4B)/.test(b.toString('latin1', 8, 11)) },
  { mime: 'audio/mp4', test: (b) => b.toString('latin1', 4, 8) === 'ftyp' && /^(M4A|M4B)/.test(b.toString('latin1', 8, 11)) },
  { mime: 'audio/ogg', test: (b) => b.toString('latin1', 0, 4) === 'OggS' },
  { mime: 'audio/mpeg', test: (b) => b.toString('latin1', 0, 3) === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) },
  { mime: 'application/pdf', test: (b) => b.toString('latin1', 0, 5) === '%PDF-' },
  { mime: 'application/zip', test: (b) => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04 },
];

export function sniffMime(head: Buffer): string | undefined {
  return SIGNATURES.find((s) => head.length >= 4 && s.test(head))?.mime;
}

/** Accepted MIME types per media message type; undefined = any. */
export const ACCEPTED_MIME: Record<MediaKind, { types?: string[]; label: string }> = {
  image: { types: ['image/jpeg', 'image/png', 'image/webp'], label: 'JPEG, PNG or WebP' },
  video: { types: ['video/mp4'], label: 'MP4' },
  voice: { types: ['audio/ogg', 'audio/mpeg'], label: 'OGG or MP3' },
  sticker: { types: ['image/webp'], label: 'WebP' },
  file: { label: 'any type' },
};

export function baseMime(mime: string): string {
  return mime.split(';')[0]!.trim().toLowerCase();
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'text/plain': 'txt',
  'text/vcard': 'vcf',
  'application/json': 'json',
};

export function extensionFor(mime: string): string {
  return EXTENSIONS[baseMime(mime)] ?? 'bin';
}

/**
 * `type/subtype` with optional `; name=value` parameters, nothing else: no spaces inside the type, no line breaks
 * (a stored type becomes a Content-Type header on download), printable ASCII only. The send schema uses the same pattern.
 */
export const MIME_PATTERN = '^[a-zA-Z0-9][\\w.+-]*/[\\w.+-]+([ \\t]*;[ \\t]*[\\w.+-]+=([\\w.+-]+|"[^"\\x00-\\x1f\\x7f-\\uffff]*"))*$';
const MIME_RE = new RegExp(MIME_PATTERN);
const MIME_MAX_LENGTH = 255;

export function isValidMime(mime: unknown): mime is string {
  return typeof mime === 'string' && mime.length <= MIME_MAX_LENGTH && MIME_RE.test(mime);
}

/**
 * A type from a remote sender or a stored row: itself when well-formed, else application/octet-stream (a received
 * file's type comes from the sender and may hold anything, CR/LF included; a row stored before types were checked too).
 */
export function safeMime(mime: unknown): string {
  return isValidMime(mime) ? mime : 'application/octet-stream';
}
