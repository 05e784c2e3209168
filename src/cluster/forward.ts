// Any node answers any request (store.kind: postgres): a request for a session another node runs is sent on to that node
// and its answer streamed back, so clients need no routing. A new session goes to the node running the fewest. The hop
// is signed with the cluster secret; a signed request is served where it lands, never sent on again (no loops). The
// caller's own credentials travel with it and are checked again by the owner, which shares the keys.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AppContext, RouteDef } from '../http/types.js';
import type { Cluster } from './cluster.js';

const FORWARDED_BY = 'x-gateway-forwarded-by';
const SIGNATURE = 'x-gateway-forward-signature';
/** the node that answered, on every forwarded answer */
const ANSWERED_BY = 'x-gateway-node';
/** a signed hop older than this is refused (clocks of the nodes may differ by this much) */
const HOP_MAX_AGE_MS = 60_000;
/** headers of one connection, not of the request: never passed on */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'proxy-connection', 'te', 'trailer']);

export interface Forwarder {
  /**
   * Sends the request on to the node running `session` when that is another node (or, for a route that starts sessions,
   * to the least-loaded node when none runs it) and sets its answer; false when it is to be served here. `body`: the
   * parsed body when it was read already (it is sent as JSON); otherwise the request's own stream goes on unread.
   */
  forward(ctx: AppContext, route: RouteDef, session: string, body?: unknown): Promise<boolean>;
}

export function createForwarder(cluster: Cluster, secret: Buffer, logger: Logger): Forwarder {
  /**
   * Connections to the other nodes, kept open a second at most: well under a node's own keep-alive (5 s), so a request is
   * never sent on a connection the other end is closing (a POST cannot be sent again)
   */
  let agent: import('undici').Agent | undefined;
  const sign = (node: string, at: number, method: string, url: string) => createHmac('sha256', secret).update(`${node}\n${at}\n${method}\n${url}`).digest();

  /** A signed hop from another node: served here. A hop header that does not verify is refused. */
  const isSignedHop = (ctx: AppContext): boolean => {
    const node = ctx.get(FORWARDED_BY);
    if (!node) return false;
    const [at, mac] = ctx.get(SIGNATURE).split('.');
    const expected = sign(node, Number(at), ctx.method, ctx.originalUrl);
    const given = Buffer.from(mac ?? '', 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected) || Math.abs(Date.now() - Number(at)) > HOP_MAX_AGE_MS) {
      throw new GatewayError('UNAUTHORIZED', 'a forwarded request without a valid signature of the cluster');
    }
    return true;
  };

  return {
    async forward(ctx, route, session, body) {
      if (isSignedHop(ctx)) return false;
      let target = await cluster.ownerOf(session);
      if (!target && route.startsSession) target = await cluster.leastLoaded();
      if (!target || target.node === cluster.nodeId) return false;
      const at = Date.now();
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(ctx.req.headers as IncomingHttpHeaders)) {
        if (value !== undefined && !HOP_BY_HOP.has(name) && !(body !== undefined && name === 'content-length')) headers[name] = value;
      }
      headers[FORWARDED_BY] = cluster.nodeId;
      headers[SIGNATURE] = `${at}.${sign(cluster.nodeId, at, ctx.method, ctx.originalUrl).toString('hex')}`;
      const { Agent, request } = await import('undici');
      agent ??= new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
      let answer;
      try {
        answer = await request(new URL(ctx.originalUrl, target.url), {
          dispatcher: agent,
          method: ctx.method as 'GET',
          headers,
          body: body !== undefined ? JSON.stringify(body) : ctx.method === 'GET' || ctx.method === 'HEAD' ? undefined : ctx.req,
          headersTimeout: 30_000,
          bodyTimeout: 0,
        });
      } catch (err) {
        logger.warn({ err, session, node: target.node }, 'the node running the session did not answer a forwarded request');
        ctx.set('Retry-After', String(Math.ceil(cluster.leaseMs / 1000)));
        throw new GatewayError('NODE_UNREACHABLE', `session ${session} runs on node ${target.node}, which does not answer; it moves to another node within ${Math.ceil(cluster.leaseMs / 1000)} s if that node is down`);
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
