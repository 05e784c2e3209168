// Turns route records into a Koa router: authenticate, validate params/query/body, check access, run the handler, wrap `data`.
import { Router } from '@koa/router';
import { assertAccess, type Principal } from '../auth/scopes.js';
import { requirePrincipal, type Authenticators } from './middleware/authenticate.js';
import { noQuery } from './schemas/common.js';
import { compileValidator, type Validator } from './validation.js';
import type { AppContext, RouteDef, RouteInput } from './types.js';

/**
 * Checks a client-token principal on a route (client rules plug in here). It takes what it counts (e.g. a send
 * from a daily cap) before the handler runs, and may return a grant that is released when the handler fails.
 */
export type ClientGuard = (principal: Extract<Principal, { kind: 'client' }>, route: RouteDef, input: RouteInput) => { release(): void } | undefined;

export function buildRouter(routes: RouteDef[], auth: Authenticators, clientGuard?: ClientGuard): Router {
  const router = new Router();
  for (const route of routes) {
    const validate = {
      params: route.schema.params ? compileValidator(route.schema.params, 'params') : undefined,
      query: compileValidator(route.schema.query ?? noQuery, 'query'),
      body: route.schema.body ? compileValidator(route.schema.body, 'body') : undefined,
    } satisfies Record<string, Validator | undefined>;
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](route.path, async function routeHandler(koaCtx) {
      const ctx = koaCtx as unknown as AppContext;
      const principal = route.access === 'public' ? undefined : await requirePrincipal(ctx, auth);
      const input: RouteInput = {
        params: validate.params ? validate.params({ ...ctx.params }) : ctx.params,
        query: validate.query({ ...ctx.query }),
        body: validate.body ? validate.body(ctx.state.body) : ctx.state.body,
        ctx,
      };
      let grant: { release(): void } | undefined;
      if (principal?.kind === 'client' && clientGuard) grant = clientGuard(principal, route, input);
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
