// The one place that writes error responses: {error:{code,message,details}} with the status of the code.
import type { ParameterizedContext } from 'koa';
import { GatewayError, MessageRefusedError, RateLimitedError, ServerBusyError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { errorStatus } from '../error-status.js';
import type { AppState } from '../types.js';
import { PostgresError } from '../../store/pg-errors.js';
import { StaleLeaseError } from '../../store/leases.js';
import { TickAbortedError } from '../../store/sql.js';

/** A request no route answered (no status set, no body) is a 404 in the error format, like any other error. */
export function throwIfUnanswered(ctx: ParameterizedContext<AppState>): void {
  if (ctx.status === 404 && ctx.body === undefined) {
    throw new GatewayError('ROUTE_NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
  }
}

export function writeError(ctx: ParameterizedContext<AppState>, err: unknown, logger: Logger): void {
  const error = toGatewayError(err);
  const status = errorStatus[error.code];
  if (status >= 500 && error.code === 'INTERNAL') {
    logger.error({ err, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'request failed');
  }
  if (error instanceof RateLimitedError || error instanceof ServerBusyError) ctx.set('Retry-After', String(error.retryAfterSeconds));
  if (error instanceof MessageRefusedError && error.retryAfterSeconds) ctx.set('Retry-After', String(error.retryAfterSeconds));
  if (error.code === 'STORE_UNAVAILABLE') ctx.set('Retry-After', '1');
  ctx.status = status;
  ctx.body = {
    error: {
      code: error.code,
      message: error.code === 'INTERNAL' ? 'internal error; see the daemon log for request ' + ctx.state.requestId : error.message,
      ...(error.details?.length ? { details: error.details } : {}),
    },
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
  // PostgreSQL's data exceptions (a number past a column's range, …): the request held a value the store cannot hold
  if (err instanceof PostgresError && err.unavailable) return new GatewayError('STORE_UNAVAILABLE', 'the database is unreachable or busy for now; try again in a moment', undefined, { cause: err });
  if (err instanceof TickAbortedError) return new GatewayError('STORE_UNAVAILABLE', 'a write made at the same moment failed and this request\'s writes were rolled back with it; try again', undefined, { cause: err });
  // the session's lease lapsed or moved while the request wrote for it: nothing was kept, and its owner answers a retry
  if (err instanceof StaleLeaseError) return new GatewayError('SESSION_ON_OTHER_NODE', `${err.message}: retry, and the node that owns it answers`, undefined, { cause: err });
  if (err instanceof PostgresError && err.code?.startsWith('22')) return new GatewayError('VALIDATION_FAILED', `a value of the request cannot be stored: ${err.message}`);
  return new GatewayError('INTERNAL', (err as Error)?.message ?? String(err), undefined, { cause: err });
}
