// Reads and parses a route's JSON request body with the route's size limit: 413 beyond it (on Content-Length first,
// then while streaming), 400 INVALID_JSON on bad syntax, 503 SERVER_BUSY when too many large bodies are being read.
import getRawBody from 'raw-body';
import { GatewayError, ServerBusyError } from '../../errors.js';
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
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8', length: Number.isNaN(length) ? undefined : length });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limitBytes} bytes, the limit of this route`);
    }
    throw new GatewayError('VALIDATION_FAILED', `could not read the request body: ${(err as Error).message}`);
  } finally {
    leave?.();
  }
  if (text.trim() === '') return;
  try {
    ctx.state.body = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('INVALID_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
  }
}
