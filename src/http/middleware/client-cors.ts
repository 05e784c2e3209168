// CORS for the client-token routes only: preflights answered from the session's client rules; other routes send no CORS headers.
import type { Middleware } from 'koa';
import { matchClientPath } from '../../auth/client-actions.js';
import { CLIENT_TOKEN_PREFIX, jose } from '../../auth/client-tokens.js';
import type { ClientRules } from '../../auth/client-rules.js';
import { GatewayError } from '../../errors.js';
import { bearerOf } from './authenticate.js';
import type { AppState } from '../types.js';

const ALLOWED_HEADERS = 'Authorization, Content-Type, Prefer';
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, Preference-Applied';

export function clientCors(rules: ClientRules): Middleware<AppState> {
  return async function clientCorsMiddleware(ctx, next) {
    if (ctx.method !== 'OPTIONS' && !ctx.get('Origin')) return next();
    const match = matchClientPath(ctx.path);
    if (!match) return next();
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    if (ctx.method === 'OPTIONS') {
      if (!origin || !(await rules.originAllowed(origin, match.session))) {
        throw new GatewayError('ORIGIN_NOT_ALLOWED', origin ? `origin ${origin} may not call this route` : 'a preflight needs an Origin header');
      }
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Methods', [...match.methods, 'OPTIONS'].join(', '));
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    if (origin && (await rules.originAllowed(origin, match.session ?? (await sessionOfToken(ctx.get('Authorization')))))) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    await next();
  };
}

/** The session a client token names, read without verifying it: it only picks whose rules decide the CORS headers. */
async function sessionOfToken(header: string): Promise<string | undefined> {
  const bearer = bearerOf(header);
  if (!bearer?.startsWith(CLIENT_TOKEN_PREFIX)) return undefined;
  try {
    const { decodeJwt } = await jose();
    const sid = decodeJwt(bearer.slice(CLIENT_TOKEN_PREFIX.length)).sid;
    return typeof sid === 'string' ? sid : undefined;
  } catch {
    return undefined;
  }
}
