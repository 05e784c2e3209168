// The one place that writes error responses: {error:{code,message,details}} with the status of the code.
import type { Middleware } from 'koa';
import { GatewayError, RateLimitedError, ServerBusyError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { errorStatus } from '../error-status.js';
import type { AppState } from '../types.js';

export function errorHandler(logger: Logger): Middleware<AppState> {
  return async function errorMiddleware(ctx, next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new GatewayError('ROUTE_NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const error = toGatewayError(err);
      const status = errorStatus[error.code];
      if (status >= 500 && error.code === 'INTERNAL') {
        logger.error({ err, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'request failed');
      }
      if (error instanceof RateLimitedError || error instanceof ServerBusyError) ctx.set('Retry-After', String(error.retryAfterSeconds));
      ctx.status = status;
      ctx.body = {
        error: {
          code: error.code,
          message: error.code === 'INTERNAL' ? 'internal error; see the daemon log for request ' + ctx.state.requestId : error.message,
          ...(error.details?.length ? { details: error.details } : {}),
        },
      };
    }
  };
}

/** Wraps anything thrown into a GatewayError; unknown errors become INTERNAL (500). */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { status?: number; expose?: boolean; message?: string; type?: string };
  if (e?.type === 'entity.too.large' || e?.status === 413) return new GatewayError('PAYLOAD_TOO_LARGE', 'the request body is too large');
  if (e?.status === 405) return new GatewayError('METHOD_NOT_ALLOWED', e.message ?? 'method not allowed');
  if (e?.status === 404) return new GatewayError('ROUTE_NOT_FOUND', e.message ?? 'not found');
  if (e?.status && e.status >= 400 && e.status < 500 && e.expose) return new GatewayError('VALIDATION_FAILED', e.message ?? 'bad request');
  return new GatewayError('INTERNAL', (err as Error)?.message ?? String(err), undefined, { cause: err });
}
