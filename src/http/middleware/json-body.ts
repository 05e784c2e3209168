// Reads and parses JSON request bodies with a size limit: 413 beyond it, 400 INVALID_JSON on bad syntax.
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { GatewayError } from '../../errors.js';
import type { AppState } from '../types.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function jsonBody(options: { limitBytes: number }): Middleware<AppState> {
  return async function jsonBodyMiddleware(ctx, next) {
    if (!METHODS_WITH_BODY.has(ctx.method) || !hasBody(ctx.req.headers)) return next();
    const type = ctx.get('Content-Type');
    if (type && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
      throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `request bodies must be application/json, not ${type.split(';')[0]}`);
    }
    const length = Number(ctx.get('Content-Length') || NaN);
    if (length > options.limitBytes) {
      ctx.req.resume();
      throw new GatewayError('PAYLOAD_TOO_LARGE', `the request body is ${length} bytes; the limit is ${options.limitBytes}`);
    }
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: options.limitBytes, encoding: 'utf8', length: Number.isNaN(length) ? undefined : length });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') {
        throw new GatewayError('PAYLOAD_TOO_LARGE', `the request body is larger than ${options.limitBytes} bytes`);
      }
      throw new GatewayError('VALIDATION_FAILED', `could not read the request body: ${(err as Error).message}`);
    }
    if (text.trim() !== '') {
      try {
        ctx.state.body = JSON.parse(text);
      } catch (err) {
        throw new GatewayError('INVALID_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
      }
    }
    await next();
  };
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}
