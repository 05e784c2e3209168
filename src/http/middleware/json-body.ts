// Reads and parses a route's JSON request body with the route's size limit: 413 beyond it (on Content-Length first,
// then while streaming), 400 INVALID_JSON on bad syntax, 503 SERVER_BUSY when too many large bodies are being read.
// A large body of a media route is parsed while it streams in, its `base64` decoded on the way (streamed-body.ts).
import getRawBody from 'raw-body';
import { GatewayError, ServerBusyError } from '../../errors.js';
import { checkJsonDepth } from './json-depth.js';
import { StreamedJsonBody } from './streamed-body.js';
import type { AppContext } from '../types.js';

export const METHODS_WITH_BODY: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface BodyLimits {
  /** every route's limit, unless it takes media */
  defaultBytes: number;
  /** the limit of routes marked `bodyLimit: 'media'` */
  mediaBytes: number;
  /** bodies over defaultBytes (or of unknown length on a media route) read at once; past it 503 */
  maxLargeBodies: number;
}

/** Counts the large bodies being read, across all requests of one app. */
export class LargeBodyGate {
  private reading = 0;

  constructor(private readonly max: number) {}

  enter(): () => void {
    if (this.reading >= this.max) throw new ServerBusyError(`${this.max} large request bodies are being read already; retry shortly`);
    this.reading++;
    let left = false;
    return () => {
      if (!left) this.reading--;
      left = true;
    };
  }
}

export function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** Reads the body into ctx.state.body; a request without one leaves it undefined. */
export async function readJsonBody(ctx: AppContext, limitBytes: number, smallBytes: number, gate: LargeBodyGate): Promise<void> {
  if (!METHODS_WITH_BODY.has(ctx.method) || !hasBody(ctx.req.headers)) return;
  const type = ctx.get('Content-Type');
  if (type && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `request bodies must be application/json, not ${type.split(';')[0]}`);
  }
  const declared = ctx.get('Content-Length');
  const length = declared === '' ? NaN : Number(declared);
  if (length > limitBytes) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `the request body is ${length} bytes; the limit of this route is ${limitBytes}`);
  }
  // a body that may exceed the small limit holds up to `limitBytes` of memory while it is read: only a few at once
  const leave = limitBytes > smallBytes && !(length <= smallBytes) ? gate.enter() : undefined;
  if (leave) {
    try {
      ctx.state.body = await readStreamedBody(ctx, limitBytes, Number.isNaN(length) ? limitBytes : length, smallBytes);
    } finally {
      leave();
    }
    return;
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8', length: Number.isNaN(length) ? undefined : length });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge(limitBytes);
    throw unreadable(err);
  }
  if (text.trim() === '') return;
  checkJsonDepth(text);
  try {
    ctx.state.body = JSON.parse(text);
  } catch (err) {
    throw invalidJson(err);
  }
}

/**
 * A large body of a media route: parsed as it arrives, its top-level `base64` decoded on the way (streamed-body.ts). A
 * body that is not JSON is still read to its end before the answer, as the small path does; one nested too deep, or
 * with more than `keptBytes` besides `base64` and its `media` items' `base64`, is refused at once (the connection then
 * closes, the rest unread).
 */
async function readStreamedBody(ctx: AppContext, limitBytes: number, capacity: number, keptBytes: number): Promise<unknown> {
  const parser = new StreamedJsonBody(capacity, keptBytes);
  let received = 0;
  let failure: unknown;
  try {
    // a refusal while streaming leaves the request as it is (not destroyed): the answer is written, then the connection closes
    for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > limitBytes) throw tooLarge(limitBytes);
      if (failure === undefined) {
        try {
          parser.push(chunk);
        } catch (err) {
          if (err instanceof GatewayError) throw err;
          failure = err;
        }
      }
    }
  } catch (err) {
    throw err instanceof GatewayError ? err : unreadable(err);
  }
  try {
    if (failure !== undefined) throw failure;
    return parser.end();
  } catch (err) {
    throw invalidJson(err);
  }
}

const tooLarge = (limitBytes: number) => new GatewayError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limitBytes} bytes, the limit of this route`);
const unreadable = (err: unknown) => new GatewayError('VALIDATION_FAILED', `could not read the request body: ${(err as Error).message}`);
const invalidJson = (err: unknown) => new GatewayError('INVALID_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
