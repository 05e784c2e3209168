// Gives every request an id (the caller's X-Request-Id when sane) and echoes it on the response.
import { randomUUID } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import type { AppState } from '../types.js';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function assignRequestId(ctx: ParameterizedContext<AppState>): void {
  const incoming = ctx.req.headers['x-request-id'];
  const id = typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
}
