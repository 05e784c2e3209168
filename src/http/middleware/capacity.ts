// Overload protection: a cap on requests in flight (503 SERVER_BUSY + Retry-After at once instead of queueing), a bound
// on what is discarded of bodies nobody read, and the refusal of paths whose percent-encoding is malformed (400, before
// anything decodes them).
import type { Middleware } from 'koa';
import type { Principal } from '../../auth/scopes.js';
import { ServerBusyError, ValidationError } from '../../errors.js';
import type { AppState } from '../types.js';

/** Monitoring keeps working under load: these paths are never refused by the in-flight cap. */
const EXEMPT = new Set(['/api/health', '/metrics']);

export function inFlightCap(max: number): Middleware<AppState> {
  let inFlight = 0;
  return async function inFlightCapMiddleware(ctx, next) {
    if (EXEMPT.has(ctx.path)) {
      try {
        return await next();
      } finally {
        ctx.state.releaseShare?.();
      }
    }
    if (inFlight >= max) throw new ServerBusyError(`${max} requests are in flight already; retry shortly`);
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      // the caller's share is held as long as the global slot (through the wait for the commit), or it would not bound it
      ctx.state.releaseShare?.();
    }
  };
}

/**
 * Fairness under the global cap: each principal (an API key, the master key, a client token's session and ephemeral id)
 * may hold at most `max` requests in flight, counted once it is authenticated; past it only that principal gets 503, so a
 * flooding client cannot take the whole of `server.maxRequestsInFlight` from the others.
 */
export class PrincipalShare {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot for the principal or throws ServerBusyError; the returned function gives it back (call it once). */
  acquire(principal: Principal): () => void {
    const id = principalId(principal);
    const held = this.inFlight.get(id) ?? 0;
    if (held >= this.max) throw new ServerBusyError(`this client has ${this.max} requests in flight already; retry shortly`);
    this.inFlight.set(id, held + 1);
    return () => {
      const now = (this.inFlight.get(id) ?? 1) - 1;
      if (now > 0) this.inFlight.set(id, now);
      else this.inFlight.delete(id);
    };
  }
}

function principalId(principal: Principal): string {
  if (principal.kind === 'master') return 'master';
  if (principal.kind === 'key') return `key:${principal.id}`;
  return `client:${principal.session}:${principal.ephemeralId}`;
}

export function wellEncodedPath(): Middleware<AppState> {
  return async function wellEncodedPathMiddleware(ctx, next) {
    if (ctx.path.includes('%')) {
      try {
        decodeURIComponent(ctx.path);
      } catch {
        throw new ValidationError('the request path has malformed percent-encoding', [{ path: '/path', message: 'malformed percent-encoding' }]);
      }
    }
    await next();
  };
}

/**
 * A request answered before its body was read (401, 404, 413, 503…): Node reads and discards the rest of the body to keep
 * the connection, however large it is. Closing at once instead makes many clients (undici among them) see a reset rather
 * than the answer, so up to `budgetBytes` are discarded (never buffered); past that the connection is closed.
 */
export function discardUnreadBody(budgetBytes: number): Middleware<AppState> {
  return async function discardUnreadBodyMiddleware(ctx, next) {
    try {
      await next();
    } finally {
      const req = ctx.req;
      if (!req.complete && !req.readableFlowing && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)) {
        let discarded = 0;
        req.on('data', (chunk: Buffer) => {
          discarded += chunk.length;
          if (discarded > budgetBytes) req.socket.destroy();
        });
      }
    }
  };
}
