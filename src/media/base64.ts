// Checks base64 text in one linear pass. (The regular expressions this replaces backtracked quadratically on long runs
// of newlines: a few hundred KB of "\n" froze the event loop for seconds.)
// Also decodes a request's `base64` field, for sends and pictures alike.
import { GatewayError, ValidationError } from '../errors.js';

export interface Base64Check {
  /** accept `+/` and `-_` in the same text (pictures do); otherwise one alphabet per text */
  mixedAlphabets: boolean;
}

const WHITESPACE = /\s/;

/**
 * True when `payload` is base64: letters, digits, `+/` (standard) or `-_` (URL-safe), line breaks anywhere in the body,
 * at most two `=` of padding, then only whitespace.
 */
export function isBase64Text(payload: string, check: Base64Check): boolean {
  let standard = false;
  let urlSafe = false;
  let padding = 0;
  let phase: 'body' | 'padding' | 'tail' = 'body';
  for (let i = 0; i < payload.length; i += 1) {
    const c = payload.charCodeAt(i);
    if (phase === 'body') {
      if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 10 || c === 13) continue;
      if (c === 43 || c === 47) {
        standard = true;
        continue;
      }
      if (c === 45 || c === 95) {
        urlSafe = true;
        continue;
      }
      phase = 'padding';
    }
    if (phase === 'padding') {
      if (c === 61 && padding < 2) {
        padding += 1;
        continue;
      }
      phase = 'tail';
    }
    if (!WHITESPACE.test(payload[i]!)) return false;
  }
  return check.mixedAlphabets || !(standard && urlSafe);
}

export interface Base64Decode extends Base64Check {
  maxBytes: number;
  /** what the 413 says, e.g. "the media is larger than 70 MB" */
  tooLarge: string;
}

/**
 * Decodes the `base64` field of a request (raw, or a `data:` URI whose type is returned): 400 when it is not base64 or
 * decodes to nothing, 413 past `maxBytes` (judged from the text's length first, so an oversized text is never decoded).
 */
export function decodeBase64Field(raw: string, options: Base64Decode): { data: Buffer; contentType?: string } {
  const match = /^data:([\w.+-]+\/[\w.+-]+)?(;[^,]*)?,/.exec(raw.slice(0, 200));
  const payload = match ? raw.slice(match[0].length) : raw;
  if (!isBase64Text(payload, options)) throw ValidationError.field('/base64', 'is not valid base64');
  const tooLarge = () => new GatewayError('PAYLOAD_TOO_LARGE', `base64: ${options.tooLarge}`, [{ path: '/base64', message: options.tooLarge }]);
  if (Math.floor((payload.length * 3) / 4) > options.maxBytes + 4) throw tooLarge();
  const data = Buffer.from(payload, 'base64');
  if (data.length === 0) throw ValidationError.field('/base64', 'decodes to no bytes');
  if (data.length > options.maxBytes) throw tooLarge();
  return { data, ...(match?.[1] ? { contentType: match[1] } : {}) };
}
