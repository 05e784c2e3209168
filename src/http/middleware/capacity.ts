// Overload protection: a cap on requests in flight (503 SERVER_BUSY + Retry-After at once instead of queueing), the
// connection of a request answered before its body was read closed once the client is quiet rather than drained, and
// the refusal of paths whose percent-encoding is malformed (400, before anything decodes them).
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../auth/scopes.js';
import { ServerBusyError, ValidationError } from '../../errors.js';
import { principalId } from '../../quota.js';
import { closeWhenQuiet } from '../client-error.js';

/** Monitoring keeps working under load: these paths are never refused by the in-flight cap. */
const EXEMPT = new Set(['/api/health', '/metrics']);

/** The global cap: `enter` takes a place or throws ServerBusyError; a request that took one gives it back with `leave`. */
export class InFlightCap {
  private inFlight = 0;

  constructor(private readonly max: number) {}

  /** Returns whether the request holds a place (exempt paths do not take one). */
  enter(path: string): boolean {
    if (EXEMPT.has(path)) return false;
    if (this.inFlight >= this.max) throw new ServerBusyError(`${this.max} requests are in flight already; retry shortly`);
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
  }
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

/**
 * Requests a handler parks while they wait rather than work (a held send waiting for its turn in the governor's queue):
 * they hold no in-flight place, so a long wait does not shut others out, but one principal may park at most `max`.
 */
export class ParkedShare {
  private readonly parked = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a parked place for the principal; undefined past its bound. The returned function gives it back (call it once). */
  acquire(principal: Principal): (() => void) | undefined {
    const id = principalId(principal);
    const held = this.parked.get(id) ?? 0;
    if (held >= this.max) return undefined;
    this.parked.set(id, held + 1);
    return () => {
      const now = (this.parked.get(id) ?? 1) - 1;
      if (now > 0) this.parked.set(id, now);
      else this.parked.delete(id);
    };
  }
}

/** 400 for a path whose percent-encoding is malformed, before anything decodes it. */
export function checkPathEncoding(path: string): void {
  if (!path.includes('%')) return;
  try {
    decodeURIComponent(path);
  } catch {
    throw new ValidationError('the request path has malformed percent-encoding', [{ path: '/path', message: 'malformed percent-encoding' }]);
  }
}

/**
 * For a request answered before its body was read (400, 401, 404, 413, 503…): the answer says `Connection: close`, and
 * the connection closes once the client goes quiet after it (at most 10 s), the rest of the body read and dropped
 * meanwhile. (Draining it for the whole request timeout let a thousand slow bodies shut everyone out; closing the socket
 * at once made a body still arriving reset the connection, and the client lost its answer.)
 */
export function closeAfterAnswer(ctx: { req: IncomingMessage; set(field: string, value: string): void; headerSent?: boolean }): void {
  const req = ctx.req;
  if (req.complete || req.readableFlowing || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) return;
  if (ctx.headerSent) return;
  ctx.set('Connection', 'close');
  // Node ends a `Connection: close` answer with socket.destroySoon(): the socket would close under the unread body
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
    closeWhenQuiet(socket);
  };
}
