// Headers every answer carries, whatever route (or error) wrote it.
import type { ParameterizedContext } from 'koa';
import type { AppState } from '../types.js';

export function setSecurityHeaders(ctx: ParameterizedContext<AppState>): void {
  // a browser must not guess an HTML or script type for a download (a received file is served with the sender's type)
  ctx.set('X-Content-Type-Options', 'nosniff');
}
