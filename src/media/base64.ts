// Checks base64 text in one linear pass. (The regular expressions this replaces backtracked quadratically on long runs
// of newlines: a few hundred KB of "\n" froze the event loop for seconds.)
// Also decodes a request's `base64` field, for sends and pictures alike: from its text, or while it streams in (a large
// body: src/http/middleware/streamed-body.ts), with the same rules and answers.
import { StringDecoder } from 'node:string_decoder';
import { GatewayError, ValidationError } from '../errors.js';

export interface Base64Check {
  /** accept `+/` and `-_` in the same text (pictures do); otherwise one alphabet per text */
  mixedAlphabets: boolean;
}

const WHITESPACE = /\s/;
/** a `data:` prefix is looked for in the text's first characters */
const HEAD_CHARS = 200;
const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+)?(;[^,]*)?,/;

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
 * A field already decoded while it streamed in gets the same checks, in the same order.
 */
export function decodeBase64Field(raw: string | StreamedBase64, options: Base64Decode): { data: Buffer; contentType?: string } {
  const field = raw instanceof StreamedBase64 ? raw : undefined;
  const match = field ? undefined : DATA_URI.exec((raw as string).slice(0, HEAD_CHARS));
  const payload = field ? undefined : match ? (raw as string).slice(match[0].length) : (raw as string);
  const wellFormed = field ? field.wellFormed && (options.mixedAlphabets || !(field.standard && field.urlSafe)) : isBase64Text(payload!, options);
  if (!wellFormed) throw ValidationError.field('/base64', 'is not valid base64');
  const tooLarge = () => new GatewayError('PAYLOAD_TOO_LARGE', `base64: ${options.tooLarge}`, [{ path: '/base64', message: options.tooLarge }]);
  if (Math.floor(((field?.payloadLength ?? payload!.length) * 3) / 4) > options.maxBytes + 4) throw tooLarge();
  const data = field ? field.data : Buffer.from(payload!, 'base64');
  if (data.length === 0) throw ValidationError.field('/base64', 'decodes to no bytes');
  if (data.length > options.maxBytes) throw tooLarge();
  const contentType = field ? field.contentType : match?.[1];
  return { data, ...(contentType ? { contentType } : {}) };
}

/**
 * A `base64` field decoded while its text arrived (a large media body: src/http/middleware/streamed-body.ts), never held
 * as a string: the bytes, plus what isBase64Text and a `data:` prefix would have said of the text.
 */
export class StreamedBase64 {
  constructor(
    readonly data: Buffer,
    /** the text's length after any `data:` prefix, in UTF-16 units (as a string's `length`) */
    readonly payloadLength: number,
    /** base64 by isBase64Text's rules, whichever alphabets it used */
    readonly wellFormed: boolean,
    readonly standard: boolean,
    readonly urlSafe: boolean,
    readonly contentType: string | undefined,
    /** what schema validation sees in place of the text: its first characters (empty only when the text is) */
    readonly standIn: string,
  ) {}

  /** The text again, as the body is sent on to another node (a cluster forwards the parsed body as JSON). */
  toJSON(): string {
    if (!this.wellFormed) return this.standIn;
    return (this.contentType ? `data:${this.contentType};base64,` : '') + this.data.toString('base64');
  }
}

const STAGE_BYTES = 64 * 1024;
// character classes of the body phase of isBase64Text
const LETTER = 0;
const STANDARD = 1;
const URL_SAFE = 2;
const LINE_BREAK = 3;
const OTHER = 4;
const CLASS = new Uint8Array(256).fill(OTHER);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') CLASS[c.charCodeAt(0)] = LETTER;
CLASS[43] = CLASS[47] = STANDARD;
CLASS[45] = CLASS[95] = URL_SAFE;
CLASS[10] = CLASS[13] = LINE_BREAK;

/**
 * Decodes base64 text fed in pieces (UTF-8 bytes as they arrived, and single characters, e.g. from escapes) into one
 * buffer, checking it as isBase64Text does and reading a `data:` prefix as decodeBase64Field does: the same answers for
 * the same text, without the text. `capacityChars` bounds the text (e.g. the body bytes left), hence the output.
 */
export class Base64StreamDecoder {
  /** a control character (U+0000–U+001F) arrived in raw text: JSON forbids it inside a string */
  rawControl = false;
  private head = '';
  private headDone = false;
  private readonly headText = new StringDecoder('utf8');
  /** UTF-8 after the body phase (padding, trailing whitespace, or what makes the text invalid) */
  private readonly restText = new StringDecoder('utf8');
  private phase: 'body' | 'padding' | 'tail' | 'invalid' = 'body';
  private padding = 0;
  private standard = false;
  private urlSafe = false;
  private payloadLength = 0;
  private contentType: string | undefined;
  /** the decoded bytes: allocated for the most the text can hold, once the letters outgrow the stage */
  private out: Buffer | undefined;
  private written = 0;
  /** base64 letters not decoded yet */
  private stage: Buffer | undefined;
  private staged = 0;

  constructor(private readonly capacityChars: number) {}

  /** UTF-8 text bytes `bytes[start, end)`. */
  writeText(bytes: Buffer, start: number, end: number): void {
    let i = start;
    while (!this.headDone && i < end) {
      const byte = bytes[i]!;
      if (byte < 0x20) this.rawControl = true;
      this.head += this.headText.write(bytes.subarray(i, i + 1));
      i += 1;
      if (this.head.length >= HEAD_CHARS) this.finishHead();
    }
    if (this.phase !== 'body') return this.writeRest(bytes, i, end);
    let run = i;
    for (; i < end; i += 1) {
      const kind = CLASS[bytes[i]!]!;
      if (kind === LETTER) continue;
      if (kind === STANDARD) this.standard = true;
      else if (kind === URL_SAFE) this.urlSafe = true;
      else {
        this.stageLetters(bytes, run, i);
        this.payloadLength += i - run;
        run = i + 1;
        if (kind === LINE_BREAK) {
          // a raw line break is a JSON error; an escaped one (writeChar) is allowed, as in isBase64Text
          this.rawControl = true;
          this.payloadLength += 1;
          continue;
        }
        this.phase = 'padding';
        return this.writeRest(bytes, i, end);
      }
    }
    this.stageLetters(bytes, run, end);
    this.payloadLength += end - run;
  }

  /** One UTF-16 unit of the text that did not arrive as raw bytes (an escape). */
  writeChar(code: number): void {
    if (!this.headDone) {
      this.head += this.headText.end() + String.fromCharCode(code);
      if (this.head.length >= HEAD_CHARS) this.finishHead();
      return;
    }
    this.step(code);
  }

  end(): StreamedBase64 {
    if (!this.headDone) {
      this.head += this.headText.end();
      this.finishHead();
    }
    this.restChars(this.restText.end());
    return new StreamedBase64(
      this.decoded(),
      this.payloadLength,
      this.phase !== 'invalid',
      this.standard,
      this.urlSafe,
      this.contentType,
      this.head.slice(0, 16),
    );
  }

  private finishHead(): void {
    this.headDone = true;
    const match = DATA_URI.exec(this.head);
    if (match?.[1]) this.contentType = match[1];
    const payload = match ? this.head.slice(match[0].length) : this.head;
    for (let i = 0; i < payload.length; i += 1) this.step(payload.charCodeAt(i));
  }

  /** Bytes after the body phase: decoded as text and checked character by character (short, unless invalid). */
  private writeRest(bytes: Buffer, start: number, end: number): void {
    if (this.phase === 'invalid') {
      for (let i = start; i < end; i += 1) if (bytes[i]! < 0x20) this.rawControl = true;
      return;
    }
    this.restChars(this.restText.write(bytes.subarray(start, end)));
  }

  private restChars(text: string): void {
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code < 0x20) this.rawControl = true;
      if (this.phase !== 'invalid') this.step(code);
    }
  }

  /** isBase64Text's rules for one character. */
  private step(code: number): void {
    this.payloadLength += 1;
    if (this.phase === 'body') {
      const kind = code < 256 ? CLASS[code]! : OTHER;
      if (kind === LETTER || kind === STANDARD || kind === URL_SAFE) {
        if (kind === STANDARD) this.standard = true;
        else if (kind === URL_SAFE) this.urlSafe = true;
        this.stage ??= Buffer.allocUnsafe(STAGE_BYTES + 4);
        this.stage[this.staged++] = code;
        if (this.staged >= STAGE_BYTES) this.flushStage();
        return;
      }
      if (kind === LINE_BREAK) return;
      this.phase = 'padding';
    }
    if (this.phase === 'padding') {
      if (code === 61 && this.padding < 2) {
        this.padding += 1;
        return;
      }
      this.phase = 'tail';
    }
    if (this.phase === 'tail' && !WHITESPACE.test(String.fromCharCode(code))) this.phase = 'invalid';
  }

  private stageLetters(bytes: Buffer, start: number, end: number): void {
    if (start < end) this.stage ??= Buffer.allocUnsafe(STAGE_BYTES + 4);
    while (start < end) {
      const n = Math.min(end - start, STAGE_BYTES - this.staged);
      bytes.copy(this.stage!, this.staged, start, start + n);
      this.staged += n;
      start += n;
      if (this.staged >= STAGE_BYTES) this.flushStage();
    }
  }

  /** Decodes the staged letters in groups of four into the output. */
  private flushStage(): void {
    const n = this.staged & ~3;
    this.out ??= Buffer.allocUnsafeSlow(Math.floor((this.capacityChars * 3) / 4) + 3);
    this.written += this.out.write(this.stage!.toString('latin1', 0, n), this.written, 'base64');
    this.stage!.copy(this.stage!, 0, n, this.staged);
    this.staged -= n;
  }

  /** The rest of the letters decoded (a last group of 2 or 3 gives 1 or 2 bytes); a short text gets a buffer of its size. */
  private decoded(): Buffer {
    const rest = this.stage?.toString('latin1', 0, this.staged) ?? '';
    if (!this.out) return Buffer.from(rest, 'base64');
    this.written += this.out.write(rest, this.written, 'base64');
    return this.written < this.out.length / 2 ? Buffer.from(this.out.subarray(0, this.written)) : this.out.subarray(0, this.written);
  }
}
