// While the daemon drains, new requests get 503 SHUTTING_DOWN.
import type { ParameterizedContext } from 'koa';
import { GatewayError } from '../../errors.js';
import type { AppState } from '../types.js';

export function refuseWhileDraining(ctx: ParameterizedContext<AppState>, isDraining: () => boolean): void {
  if (!isDraining()) return;
  ctx.set('Connection', 'close');
  throw new GatewayError('SHUTTING_DOWN', 'the daemon is shutting down');
}
