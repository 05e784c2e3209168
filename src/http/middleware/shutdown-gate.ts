// While the daemon drains, new requests get 503 SHUTTING_DOWN.
import type { Middleware } from 'koa';
import { GatewayError } from '../../errors.js';
import type { AppState } from '../types.js';

export function shutdownGate(isDraining: () => boolean): Middleware<AppState> {
  return async function shutdownGateMiddleware(ctx, next) {
    if (isDraining()) {
      ctx.set('Connection', 'close');
      throw new GatewayError('SHUTTING_DOWN', 'the daemon is shutting down');
    }
    await next();
  };
}
