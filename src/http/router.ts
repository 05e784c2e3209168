// Turns route records into a Koa router. Per request, in order: authenticate, validate params/query, check the scope
// (and the session when it is in the path), and only then read the body with the route's limit, validate it, check the
// session it names (and the client rules that need it), run the handler, wrap `data`.
import { Router } from '@koa/router';
import { assertAccess, type Principal } from '../auth/scopes.js';
import { PrincipalShare } from './middleware/capacity.js';
import { requirePrincipal, type Authenticators } from './middleware/authenticate.js';
import { LargeBodyGate, readJsonBody, type BodyLimits } from './middleware/json-body.js';
import { noQuery } from './schemas/common.js';
import { compileValidator, type Validator } from './validation.js';
import type { AppContext, RouteDef, RouteInput } from './types.js';

type ClientPrincipal = Extract<Principal, { kind: 'client' }>;

/**
 * Checks a client-token principal on a route (client rules plug in here). `admit` runs before the body is read and
 * refuses what it can without it; `enforce` runs after, takes what it counts (e.g. a send from a daily cap) before the
 * handler runs, and may return a grant that is released when the handler fails.
 */
export interface ClientGuard {
  admit(principal: ClientPrincipal, route: RouteDef, ctx: AppContext): void;
  enforce(principal: ClientPrincipal, route: RouteDef, input: RouteInput): { release(): void } | undefined;
}

export function buildRouter(routes: RouteDef[], auth: Authenticators, limits: BodyLimits, clientGuard?: ClientGuard, maxInFlightPerPrincipal = Infinity): Router {
  const router = new Router();
  const share = new PrincipalShare(maxInFlightPerPrincipal);
  const largeBodies = new LargeBodyGate(limits.maxLargeBodies);
  for (const route of routes) {
    const validate = {
      params: route.schema.params ? compileValidator(route.schema.params, 'params') : undefined,
      query: compileValidator(route.schema.query ?? noQuery, 'query'),
      body: route.schema.body ? compileValidator(route.schema.body, 'body') : undefined,
    } satisfies Record<string, Validator | undefined>;
    const bodyLimit = route.bodyLimit === 'media' ? limits.mediaBytes : limits.defaultBytes;
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](route.path, async function routeHandler(koaCtx) {
      const ctx = koaCtx as unknown as AppContext;
      const principal = route.access === 'public' ? undefined : await requirePrincipal(ctx, auth);
      // released by the in-flight cap once the request is answered (health and metrics, exempt there, are public)
      if (principal && !ctx.state.releaseShare) ctx.state.releaseShare = share.acquire(principal);
      const params = validate.params ? validate.params({ ...ctx.params }) : ctx.params;
      const query = validate.query({ ...ctx.query });
      if (principal?.kind === 'client' && clientGuard) clientGuard.admit(principal, route, ctx);
      else if (principal) assertAccess(principal, route.access, route.sessionFrom === 'params' ? (params as { session?: string }).session : undefined);
      await readJsonBody(ctx, bodyLimit, limits.defaultBytes, largeBodies);
      const input: RouteInput = { params, query, body: validate.body ? validate.body(ctx.state.body) : ctx.state.body, ctx };
      let grant: { release(): void } | undefined;
      if (principal?.kind === 'client' && clientGuard) grant = clientGuard.enforce(principal, route, input);
      else if (principal) assertAccess(principal, route.access, sessionOf(route, input));
      let data: unknown;
      try {
        data = await route.handler(input);
      } catch (err) {
        grant?.release();
        throw err;
      }
      if (data !== undefined) ctx.body = { data };
    });
  }
  return router;
}

export function sessionOf(route: RouteDef, input: RouteInput): string | undefined {
  if (typeof route.sessionFrom === 'function') return route.sessionFrom(input);
  if (route.sessionFrom === 'params') return (input.params as { session?: string }).session;
  if (route.sessionFrom === 'body') return (input.body as { session?: string } | undefined)?.session;
  return undefined;
}
