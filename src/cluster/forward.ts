// Any node answers any request (store.kind: postgres): a request for a session another node runs is sent on to that node
// and its answer streamed back, so clients need no routing. A new session goes to the node running the fewest. The hop
// is signed with the cluster secret; a signed request is served where it lands, never sent on again (no loops). The
// caller's own credentials travel with it and are checked again by the owner, which shares the keys.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import getRawBody from 'raw-body';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { hasBody, METHODS_WITH_BODY } from '../http/middleware/json-body.js';
import type { AppContext, RouteDef } from '../http/types.js';
import type { Cluster } from './cluster.js';

const FORWARDED_BY = 'x-gateway-forwarded-by';
const SIGNATURE = 'x-gateway-forward-signature';
/** the SHA-256 of the body sent on: signed, so a forged hop is refused before its body is read */
const BODY_HASH = 'x-gateway-body-sha256';
/** the node that answered, on every forwarded answer */
const ANSWERED_BY = 'x-gateway-node';
/** a signed hop older than this is refused (clocks of the nodes may differ by this much); a hop is accepted once within it */
const HOP_MAX_AGE_MS = 30_000;
/** how long a forward waits for the database to say which node runs the session */
const OWNER_LOOKUP_TIMEOUT_MS = 2_000;
/** how long a forward waits for a connection to the owner, then for the head of its answer (docs/SCALING.md) */
const FORWARD_CONNECT_TIMEOUT_MS = 2_000;
const FORWARD_HEADERS_TIMEOUT_MS = 30_000;
/** headers of one connection, not of the request: never passed on */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'proxy-connection', 'te', 'trailer', 'expect']);

export interface Forwarder {
  /**
   * Sends the request on to the node running `session` when that is another node (or, for a route that starts sessions,
   * to the least-loaded node when none runs it) and sets its answer; false when it is to be served here. `body`: the
   * parsed body when it was read already (it is sent as JSON); otherwise the request's own body is read and sent as is.
   */
  forward(ctx: AppContext, route: RouteDef, session: string, body?: unknown): Promise<boolean>;
}

export interface ForwarderOptions {
  /** the cluster secret (cluster.secret): signs every hop */
  secret: Buffer;
  logger: Logger;
  /** the largest body sent on or accepted from another node, by route (server.bodyLimitBytes, or the media routes') */
  bodyLimits: { defaultBytes: number; mediaBytes: number };
  clock?: () => number;
}

/**
 * The URL a request is sent on to: the owner's own origin with the request's path and query, never a scheme or host the
 * caller gave (an absolute-form request target names any host, and the hop carries the caller's credentials).
 */
export function forwardUrl(ownerUrl: string, pathAndQuery: string): URL {
  if (!pathAndQuery.startsWith('/')) throw new GatewayError('VALIDATION_FAILED', 'the request target must be a path');
  const origin = new URL(ownerUrl).origin;
  const url = new URL(`${origin}${pathAndQuery}`);
  if (url.origin !== origin) throw new GatewayError('VALIDATION_FAILED', 'the request target must be a path');
  return url;
}

/** The path and query of a request, as sent on and as signed: the same string on both nodes. */
const pathAndQueryOf = (ctx: AppContext) => `${ctx.path}${ctx.search}`;

export const bodyHashOf = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

/**
 * What a hop's signature covers: the node that sends it and the one it is for, the time (ms) and a nonce, the method, the
 * path and query, and the SHA-256 of the body bytes sent (bodyHashOf).
 */
export function signHop(secret: Buffer, hop: { from: string; to: string; at: number; nonce: string; method: string; target: string; bodyHash: string }): Buffer {
  return createHmac('sha256', secret).update(`gateway hop v2\n${hop.from}\n${hop.to}\n${hop.at}\n${hop.nonce}\n${hop.method}\n${hop.target}\n${hop.bodyHash}`).digest();
}

export function createForwarder(cluster: Cluster, options: ForwarderOptions): Forwarder {
  const { secret, logger } = options;
  const clock = options.clock ?? Date.now;
  /**
   * Connections to the other nodes, kept open a second at most: well under a node's own keep-alive (5 s), so a request is
   * never sent on a connection the other end is closing (a POST cannot be sent again)
   */
  let agent: import('undici').Agent | undefined;
  /** signatures of the hops accepted within HOP_MAX_AGE_MS, with when each may be forgotten, oldest first */
  const seen = new Map<string, number>();

  const refuse = (why: string) => new GatewayError('UNAUTHORIZED', `a forwarded request without a valid signature of the cluster: ${why}`);

  const readBody = async (req: IncomingMessage, route: RouteDef): Promise<Buffer> => {
    if (!METHODS_WITH_BODY.has(req.method ?? '') || !hasBody(req.headers)) return Buffer.alloc(0);
    const limit = route.bodyLimit === 'media' ? options.bodyLimits.mediaBytes : options.bodyLimits.defaultBytes;
    try {
      return await getRawBody(req, { limit });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw new GatewayError('PAYLOAD_TOO_LARGE', `the request body is over ${limit} bytes, the limit of this route`);
      throw new GatewayError('VALIDATION_FAILED', `the request body could not be read: ${(err as Error).message}`);
    }
  };

  /**
   * A signed hop from another node: served here. A hop header that does not verify (another node's hop, too old, or seen
   * already) is refused before any body is read; then a body that is not the one signed. A body the route read already
   * (`parsed`) is checked as the sender sent it, the JSON text of what it parsed; an unread one is read here and handed
   * on to the route as if unread.
   */
  const isSignedHop = async (ctx: AppContext, route: RouteDef, parsed: unknown): Promise<boolean> => {
    const from = ctx.get(FORWARDED_BY);
    if (!from) return false;
    const [at, nonce, mac, extra] = ctx.get(SIGNATURE).split('.');
    const bodyHash = ctx.get(BODY_HASH);
    if (extra !== undefined || !/^\d{1,15}$/.test(at ?? '') || !/^[0-9a-f]{32}$/.test(nonce ?? '') || !/^[0-9a-f]{64}$/.test(mac ?? '') || !/^[0-9a-f]{64}$/.test(bodyHash)) throw refuse('malformed');
    const now = clock();
    if (Math.abs(now - Number(at)) > HOP_MAX_AGE_MS) throw refuse('too old');
    const expected = signHop(secret, { from, to: cluster.nodeId, at: Number(at), nonce: nonce!, method: ctx.method, target: pathAndQueryOf(ctx), bodyHash });
    if (!timingSafeEqual(Buffer.from(mac!, 'hex'), expected)) throw refuse('it does not verify');
    for (const [signature, forgetAt] of seen) {
      if (forgetAt > now) break;
      seen.delete(signature);
    }
    if (seen.has(mac!)) throw refuse('replayed');
    // kept until the hop is past its age: accepted up to HOP_MAX_AGE_MS after `at` inclusive, forgotten only after
    seen.set(mac!, Number(at) + HOP_MAX_AGE_MS + 1);
    const body = parsed !== undefined ? Buffer.from(JSON.stringify(parsed)) : await readBody(ctx.req, route);
    if (bodyHashOf(body) !== bodyHash) throw refuse('the body is not the one signed');
    if (parsed === undefined && body.length) ctx.req = Object.assign(new PassThrough().end(body), { headers: ctx.req.headers, method: ctx.req.method, url: ctx.req.url, socket: ctx.req.socket }) as unknown as IncomingMessage;
    return true;
  };

  /** Which node runs the session, or where a new one starts: the database has OWNER_LOOKUP_TIMEOUT_MS to say. */
  const lookUp = async (session: string, startsSession: boolean): Promise<{ node: string; url: string } | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new GatewayError('NODE_UNREACHABLE', `could not learn within ${OWNER_LOOKUP_TIMEOUT_MS} ms which node runs session ${session}`)), OWNER_LOOKUP_TIMEOUT_MS);
    });
    try {
      const owner = await Promise.race([cluster.ownerOf(session), timeout]);
      return owner ?? (startsSession ? await Promise.race([cluster.leastLoaded(), timeout]) : undefined);
    } finally {
      clearTimeout(timer);
    }
  };

  const unreachable = (ctx: AppContext, message: string) => {
    ctx.set('Retry-After', String(Math.ceil(cluster.leaseMs / 1000)));
    return new GatewayError('NODE_UNREACHABLE', message);
  };

  return {
    async forward(ctx, route, session, body) {
      if (await isSignedHop(ctx, route, body)) return false;
      let target;
      try {
        target = await lookUp(session, route.startsSession === true);
      } catch (err) {
        if (err instanceof GatewayError && err.code === 'NODE_UNREACHABLE') throw unreachable(ctx, err.message);
        throw err;
      }
      if (!target || target.node === cluster.nodeId) return false;
      const url = forwardUrl(target.url, pathAndQueryOf(ctx));
      const bytes = body !== undefined ? Buffer.from(JSON.stringify(body)) : await readBody(ctx.req, route);
      const at = clock();
      const nonce = randomBytes(16).toString('hex');
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(ctx.req.headers as IncomingHttpHeaders)) {
        if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'content-length') headers[name] = value;
      }
      headers[FORWARDED_BY] = cluster.nodeId;
      headers[BODY_HASH] = bodyHashOf(bytes);
      // signed as the owner will read it: the URL parser may have re-encoded the path (quotes, braces) or removed dot segments
      const mac = signHop(secret, { from: cluster.nodeId, to: target.node, at, nonce, method: ctx.method, target: url.pathname + url.search, bodyHash: headers[BODY_HASH] });
      headers[SIGNATURE] = `${at}.${nonce}.${mac.toString('hex')}`;
      const { Agent, request } = await import('undici');
      agent ??= new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000, connect: { timeout: FORWARD_CONNECT_TIMEOUT_MS } });
      let answer;
      try {
        answer = await request(url, {
          dispatcher: agent,
          method: ctx.method as 'GET',
          headers,
          body: bytes.length || METHODS_WITH_BODY.has(ctx.method) ? bytes : undefined,
          headersTimeout: FORWARD_HEADERS_TIMEOUT_MS,
          bodyTimeout: 0,
        });
      } catch (err) {
        logger.warn({ err, session, node: target.node }, 'the node running the session did not answer a forwarded request');
        throw unreachable(ctx, `session ${session} runs on node ${target.node}, which does not answer; it moves to another node within ${Math.ceil(cluster.leaseMs / 1000)} s if that node is down`);
      }
      ctx.state.forwardedTo = target.node;
      ctx.status = answer.statusCode;
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) ctx.set(name, value as string | string[]);
      ctx.set(ANSWERED_BY, target.node);
      // the owner going away mid-answer (it died during an event stream) ends this answer, never the process
      answer.body.on('error', (err) => {
        // the caller left (the abort below is ours): nothing went wrong
        if (err.name === 'AbortError' || (err as { code?: string }).code === 'UND_ERR_ABORTED') return;
        logger.warn({ err, session, node: target.node }, 'a forwarded answer broke off');
      });
      ctx.body = answer.body;
      // a caller that goes away before the answer is through (an event stream closed) ends the forwarded request too
      ctx.res.once('close', () => {
        if (!ctx.res.writableFinished) answer.body.destroy();
      });
      return true;
    },
  };
}
