// Parses a large JSON body of a media route as it arrives: the top-level `base64` string is decoded while it streams
// in (a StreamedBase64), never held as text; everything else is kept and parsed by JSON.parse once the body is complete.
// The `base64` of each item of a top-level `media` array (the sandbox history route's media, which follow the send
// rules) is kept as text, but is no side field: it does not count towards the kept bytes' cap.
// A 70 MB file as base64 is a 93 MB string: read, parsed and decoded as text it cost several copies of that (seconds,
// and hundreds of MB); this way the decoded bytes are the only large allocation.
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { Base64StreamDecoder, StreamedBase64 } from '../../media/base64.js';
import { MAX_JSON_DEPTH, tooDeep } from './json-depth.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const STREAMED_KEY = 'base64';
/** `media[i].base64`: the depth of a media item's fields, and the top-level key of the list */
const MEDIA_LIST_KEY = 'media';
const MEDIA_ITEM_DEPTH = 3;
const SIMPLE_ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 8, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9 };
const WHITESPACE_BYTES = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * Feeds the body's chunks in order (`push`), then `end()` returns the parsed value, with each top-level `base64` string
 * a StreamedBase64. `capacity` bounds the body's bytes (its Content-Length, or the route's limit). `push` throws
 * JSON_TOO_DEEP past MAX_JSON_DEPTH levels of nesting, and PAYLOAD_TOO_LARGE once what is kept besides the streamed
 * strings and the media items' base64 passes `maxKeptBytes` (the ordinary body limit): only those may be large.
 */
export class StreamedJsonBody {
  /** the body without its streamed strings, each replaced by a placeholder string */
  private readonly kept: Buffer[] = [];
  private readonly placeholder = `\u0000streamed-${randomBytes(12).toString('hex')}-`;
  private readonly streamed: StreamedBase64[] = [];
  private mode: 'outside' | 'string' | 'streamed' = 'outside';
  private depth = 0;
  private last = 0;
  /** bytes of a top-level (or media item's) string so far (up to the streamed key's length + 1), to recognise the key */
  private key: number[] | undefined;
  private keyIsStreamed = false;
  private valueIsStreamed = false;
  private topLevelKey: string | undefined;
  /** inside the top-level `media` array; the container at MEDIA_ITEM_DEPTH is one of its objects */
  private inMediaList = false;
  private inMediaItem = false;
  private keyIsMediaBase64 = false;
  /** inside a kept string that does not count towards maxKeptBytes (a media item's base64) */
  private uncounted = false;
  /** inside a kept string: the previous byte was a backslash */
  private escaped = false;
  /** inside a streamed string: an escape sequence so far (`\`, `\u12`…) */
  private escape = '';
  private decoder: Base64StreamDecoder | undefined;
  private received = 0;
  /** where the current chunk's kept bytes start */
  private keptFrom = 0;
  private keptBytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxKeptBytes = Infinity,
  ) {}

  push(chunk: Buffer): void {
    this.keptFrom = 0;
    let i = 0;
    while (i < chunk.length) {
      if (this.mode === 'streamed') i = this.streamValue(chunk, i);
      else if (this.mode === 'string') i = this.skipString(chunk, i);
      else i = this.structure(chunk, i);
    }
    if (this.mode !== 'streamed') this.keep(chunk, chunk.length);
    this.received += chunk.length;
  }

  end(): unknown {
    if (this.mode !== 'outside') throw new SyntaxError('Unterminated string in JSON at the end of the body');
    const text = new TextDecoder().decode(Buffer.concat(this.kept));
    if (text.trim() === '') return undefined;
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const field = (value as Record<string, unknown>)[STREAMED_KEY];
      if (typeof field === 'string' && field.startsWith(this.placeholder)) {
        (value as Record<string, unknown>)[STREAMED_KEY] = this.streamed[Number(field.slice(this.placeholder.length))];
      }
    }
    return value;
  }

  /** Outside strings: tracks nesting and the top-level key, until a string starts. */
  private structure(chunk: Buffer, start: number): number {
    for (let i = start; i < chunk.length; i += 1) {
      const byte = chunk[i]!;
      if (WHITESPACE_BYTES.has(byte)) {
        // a run of whitespace is kept as its first byte: padding is not a field, and does not count towards maxKeptBytes
        let end = i + 1;
        while (end < chunk.length && WHITESPACE_BYTES.has(chunk[end]!)) end += 1;
        if (end - i > 1) {
          this.keep(chunk, i + 1);
          this.keptFrom = end;
        }
        i = end - 1;
        continue;
      }
      if (byte === QUOTE) {
        this.valueIsStreamed = this.depth === 1 && this.last === COLON && this.keyIsStreamed;
        const mediaBase64 = this.depth === MEDIA_ITEM_DEPTH && this.last === COLON && this.keyIsMediaBase64;
        const keyed = this.depth === 1 || (this.depth === MEDIA_ITEM_DEPTH && this.inMediaItem);
        this.key = keyed && !this.valueIsStreamed && !mediaBase64 ? [] : undefined;
        this.last = byte;
        if (mediaBase64) {
          this.keep(chunk, i + 1);
          this.keptFrom = i + 1;
          this.uncounted = true;
        }
        if (this.valueIsStreamed) {
          this.keep(chunk, i);
          this.mode = 'streamed';
          this.escape = '';
          this.decoder = new Base64StreamDecoder(this.capacity - this.received - i);
          return i + 1;
        }
        this.mode = 'string';
        this.escaped = false;
        return i + 1;
      }
      if (byte === 0x7b || byte === 0x5b) {
        if (++this.depth > MAX_JSON_DEPTH) throw tooDeep();
        if (this.depth === 2) this.inMediaList = byte === 0x5b && this.last === COLON && this.topLevelKey === MEDIA_LIST_KEY;
        else if (this.depth === MEDIA_ITEM_DEPTH) this.inMediaItem = byte === 0x7b && this.inMediaList;
      } else if (byte === 0x7d || byte === 0x5d) {
        this.depth -= 1;
        if (this.depth < MEDIA_ITEM_DEPTH) this.inMediaItem = false;
        if (this.depth < 2) this.inMediaList = false;
      } else if (byte === COLON && this.depth === 1) {
        this.topLevelKey = this.key !== undefined ? String.fromCharCode(...this.key) : undefined;
        this.keyIsStreamed = this.topLevelKey === STREAMED_KEY;
      } else if (byte === COLON && this.depth === MEDIA_ITEM_DEPTH) {
        this.keyIsMediaBase64 = this.inMediaItem && this.key !== undefined && String.fromCharCode(...this.key) === STREAMED_KEY;
      }
      if (byte !== COLON) {
        this.keyIsStreamed = false;
        this.keyIsMediaBase64 = false;
      }
      this.key = undefined;
      this.last = byte;
    }
    return chunk.length;
  }

  /** Inside a kept string: jumps to its closing quote (or the chunk's end), noting a short top-level string's bytes. */
  private skipString(chunk: Buffer, start: number): number {
    let i = start;
    // each found once per chunk and searched again only when passed: a string of many escapes must not rescan the chunk
    let quote = -2;
    let backslash = -2;
    while (i < chunk.length) {
      if (this.escaped) {
        this.escaped = false;
        this.key = undefined; // an escaped key is never taken for the streamed one (JSON.parse still reads it right)
        i += 1;
        continue;
      }
      if (quote !== -1 && quote < i) quote = chunk.indexOf(QUOTE, i);
      if (backslash !== -1 && backslash < i) backslash = chunk.indexOf(BACKSLASH, i);
      const stop = quote === -1 ? chunk.length : quote;
      if (backslash !== -1 && backslash < stop) {
        this.note(chunk, i, backslash);
        this.escaped = true;
        i = backslash + 1;
        continue;
      }
      this.note(chunk, i, stop);
      if (quote === -1) return chunk.length;
      if (this.uncounted) {
        this.keep(chunk, quote);
        this.keptFrom = quote;
        this.uncounted = false;
      }
      this.mode = 'outside';
      return quote + 1;
    }
    return i;
  }

  private note(chunk: Buffer, start: number, end: number): void {
    if (!this.key) return;
    if (this.key.length + end - start > STREAMED_KEY.length) this.key = undefined;
    else for (let i = start; i < end; i += 1) this.key.push(chunk[i]!);
  }

  private keep(chunk: Buffer, end: number): void {
    if (end <= this.keptFrom) return;
    if (!this.uncounted) this.keptBytes += end - this.keptFrom;
    if (this.keptBytes > this.maxKeptBytes) {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `the request body's fields besides base64 are larger than ${this.maxKeptBytes} bytes, the limit of a JSON body`);
    }
    this.kept.push(Buffer.from(chunk.subarray(this.keptFrom, end)));
  }

  /**
   * Inside the streamed string: hands its text to the decoder, resolving escapes, until the closing quote, where a
   * placeholder string takes its place among the kept bytes.
   */
  private streamValue(chunk: Buffer, start: number): number {
    const decoder = this.decoder!;
    let i = start;
    let quote = -2;
    let backslash = -2;
    while (i < chunk.length) {
      if (this.escape !== '') {
        i = this.readEscape(chunk, i);
        continue;
      }
      if (quote !== -1 && quote < i) quote = chunk.indexOf(QUOTE, i);
      if (backslash !== -1 && backslash < i) backslash = chunk.indexOf(BACKSLASH, i);
      const stop = quote === -1 ? chunk.length : quote;
      if (backslash !== -1 && backslash < stop) {
        decoder.writeText(chunk, i, backslash);
        this.escape = '\\';
        i = backslash + 1;
        continue;
      }
      decoder.writeText(chunk, i, stop);
      if (quote === -1) return chunk.length;
      if (decoder.rawControl) throw new SyntaxError('Bad control character in string literal in JSON');
      this.kept.push(Buffer.from(JSON.stringify(this.placeholder + this.streamed.length)));
      this.streamed.push(decoder.end());
      this.decoder = undefined;
      this.mode = 'outside';
      this.last = QUOTE;
      this.keptFrom = quote + 1;
      return quote + 1;
    }
    return i;
  }

  /** One byte of an escape sequence in the streamed string; a complete one goes to the decoder as a character. */
  private readEscape(chunk: Buffer, i: number): number {
    const byte = chunk[i]!;
    if (this.escape === '\\') {
      const simple = SIMPLE_ESCAPES[byte];
      if (simple !== undefined) {
        this.decoder!.writeChar(simple);
        this.escape = '';
      } else if (byte === 0x75) {
        this.escape = '\\u';
      } else {
        throw new SyntaxError(`Bad escaped character in JSON (\\${String.fromCharCode(byte)})`);
      }
      return i + 1;
    }
    const hex = String.fromCharCode(byte);
    if (!/^[0-9a-fA-F]$/.test(hex)) throw new SyntaxError('Bad Unicode escape in JSON');
    this.escape += hex;
    if (this.escape.length === 6) {
      this.decoder!.writeChar(Number.parseInt(this.escape.slice(2), 16));
      this.escape = '';
    }
    return i + 1;
  }
}
