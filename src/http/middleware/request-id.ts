// Gives every request an id (the caller's X-Request-Id when sane) and echoes it on the response.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppState } from '../types.js';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): Middleware<AppState> {
  return async function requestIdMiddleware(ctx, next) {
    const incoming = ctx.get('X-Request-Id');
    ctx.state.requestId = ACCEPTABLE.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
