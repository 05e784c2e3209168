// Turns route records into a Koa router. Per request, in order: authenticate, validate params/query, check the scope
// (and the session when it is in the path), and only then read the body with the route's limit, validate it, check the
// session it names (and the client rules that need it), run the handler, wrap `data`.
import { Router } from '@koa/router';
import type { Middleware, Next, ParameterizedContext } from 'koa';
import { assertAccess, type Principal } from '../auth/scopes.js';
import { ParkedShare, PrincipalShare } from './middleware/capacity.js';
import { requirePrincipal, type Authenticators } from './middleware/authenticate.js';
import { LargeBodyGate, readJsonBody, type BodyLimits } from './middleware/json-body.js';
import { noQuery } from './schemas/common.js';
import { compileValidator, type Validator } from './validation.js';
import type { AppContext, AppState, AuditedCall, RouteAudit, RouteDef, RouteInput } from './types.js';
import { actorOf, type AuditRecord } from '../audit/log.js';
import type { AuditAction } from '../audit/actions.js';
import { GatewayError } from '../errors.js';
import { errorStatus } from './error-status.js';
import { toGatewayError } from './middleware/errors.js';
import type { Forwarder } from '../cluster/forward.js';
import type { IdempotentRequests, IdempotentStart } from './idempotency.js';

type ClientPrincipal = Extract<Principal, { kind: 'client' }>;

/**
 * Checks a client-token principal on a route (client rules plug in here). `admit` runs before the body is read and
 * refuses what it can without it; `enforce` runs after, takes what it counts (e.g. a send from a daily cap) before the
 * handler runs, and may return a grant that is released when the handler fails.
 */
export interface ClientGuard {
  admit(principal: ClientPrincipal, route: RouteDef, ctx: AppContext): Promise<void>;
  enforce(principal: ClientPrincipal, route: RouteDef, input: RouteInput): Promise<{ release(): void } | undefined>;
}

/**
 * The routes as one Koa middleware. A request for a path without parameters is looked up in a map (the same route the
 * router would pick: the first registered one that matches); any other request goes through @koa/router, which tests
 * the patterns of the routes in order. A known path asked with another method (any method, known to HTTP or not) gets
 * 405 with `Allow`; a path whose literal segment another route reads as a parameter (`…/groups/join` against
 * `…/groups/:groupId`) is that literal route's path, whatever the method.
 */
export function buildRouter(
  routes: RouteDef[],
  auth: Authenticators,
  limits: BodyLimits,
  clientGuard?: ClientGuard,
  maxInFlightPerPrincipal = Infinity,
  audit?: AuditSink,
  forwarder?: Forwarder,
  idempotency?: IdempotentRequests,
): Middleware<AppState> {
  const router = new Router();
  const share = new PrincipalShare(maxInFlightPerPrincipal);
  const parked = new ParkedShare(maxInFlightPerPrincipal);
  const largeBodies = new LargeBodyGate(limits.maxLargeBodies);
  for (const route of routes) {
    const validate = {
      params: route.schema.params ? compileValidator(route.schema.params, 'params') : undefined,
      query: compileValidator(route.schema.query ?? noQuery, 'query'),
      body: route.schema.body ? compileValidator(route.schema.body, 'body') : undefined,
    } satisfies Record<string, Validator | undefined>;
    const bodyLimit = route.bodyLimit === 'media' ? limits.mediaBytes : limits.defaultBytes;
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    /** `seen` (audited routes only) collects the validated inputs and the result for the audit entry */
    const routeHandler = async function routeHandler(koaCtx: unknown, _next?: unknown, seen?: AuditedCall): Promise<void> {
      const ctx = koaCtx as AppContext;
      ctx.state.route = route;
      const principal = route.access === 'public' ? undefined : await requirePrincipal(ctx, auth);
      // released by the in-flight cap once the request is answered (health and metrics, exempt there, are public)
      if (principal && !ctx.state.releaseShare) ctx.state.releaseShare = share.acquire(principal);
      if (principal) {
        ctx.state.park = () => {
          const unpark = parked.acquire(principal);
          if (unpark) ctx.state.leavePlaces?.();
          return unpark;
        };
      }
      const params = validate.params ? validate.params({ ...ctx.params }) : ctx.params;
      if (seen) seen.params = params;
      const query = validate.query({ ...ctx.query });
      if (principal?.kind === 'client' && clientGuard) await clientGuard.admit(principal, route, ctx);
      else if (principal) assertAccess(principal, route.access, route.sessionFrom === 'params' ? (params as { session?: string }).session : undefined);
      // in a cluster, a session another node runs is that node's to answer: sent on before the body is read
      const inPath = (params as { session?: string }).session;
      if (forwarder && inPath !== undefined && (await forwarder.forward(ctx, route, inPath))) return;
      await readJsonBody(ctx, bodyLimit, limits.defaultBytes, largeBodies);
      const input: RouteInput = { params, query, body: validate.body ? validate.body(ctx.state.body) : ctx.state.body, ctx };
      if (seen) seen.body = input.body;
      const guarded = principal?.kind === 'client' && clientGuard ? principal : undefined;
      if (principal && !guarded) assertAccess(principal, route.access, sessionOf(route, input));
      // the owner checks and counts what a client's rules count
      const named = forwarder && inPath === undefined ? sessionOf(route, input) : undefined;
      if (named !== undefined && (await forwarder!.forward(ctx, route, named, ctx.state.body))) return;
      const idempotencyKey = route.idempotent ? ctx.get('Idempotency-Key') : '';
      const keyed = idempotency && (idempotencyKey || (route.idempotent && ctx.headers['idempotency-key'] !== undefined));
      const request = { method: route.method, path: ctx.path, body: input.body, variant: /\brespond-async\b/i.test(ctx.get('Prefer')) ? 'respond-async' : '' };
      const replay = (answer: { status: number; data: unknown }) => {
        ctx.set('Idempotent-Replayed', 'true');
        ctx.status = answer.status;
        if (seen) seen.data = answer.data;
        ctx.body = { data: answer.data };
      };
      let grant: { release(): void } | undefined;
      if (guarded) {
        try {
          grant = await clientGuard!.enforce(guarded, route, input);
        } catch (err) {
          // a replay sends nothing and counts nothing: a client past its daily cap still gets its first answer
          const first = keyed && toGatewayError(err).code === 'DAILY_CAP_REACHED' ? await idempotency!.replayOf(principal, idempotencyKey, request) : undefined;
          if (!first) throw err;
          return replay(first);
        }
      }
      let held: Extract<IdempotentStart, { replay: false }> | undefined;
      if (keyed) {
        let start: IdempotentStart;
        try {
          start = await idempotency!.begin(principal, idempotencyKey, request);
        } catch (err) {
          // a refused or busy key sent nothing: a client token's daily count gets its send back
          grant?.release();
          throw err;
        }
        if (start.replay) {
          grant?.release();
          return replay(start);
        }
        held = start;
      }
      let data: unknown;
      try {
        data = await route.handler(input);
      } catch (err) {
        grant?.release();
        // the request's own error is the answer, whatever becomes of its key's record
        await held?.end({ error: err }).catch(() => {});
        throw err;
      }
      await held?.end({ status: ctx.status >= 200 && ctx.status < 300 ? ctx.status : 200, data });
      if (seen) seen.data = data;
      if (data !== undefined) ctx.body = { data };
    };
    router[method](route.path, route.audit && audit ? audited(route.audit, routeHandler, audit) : routeHandler);
  }
  const exact = staticRoutes(router, routes);
  const literals = literalPaths(router, routes);
  // the router's own context type adds what it sets (params, router) to the app's
  const routed = router.routes() as unknown as Middleware<AppState>;
  return function route(ctx, next) {
    const handler = exact.get(ctx.method)?.get(ctx.path);
    if (handler) {
      (ctx as unknown as AppContext).params = {};
      return handler(ctx, next);
    }
    const literal = literals.find((candidate) => candidate.pattern.test(ctx.path));
    if (literal && !literal.methods.includes(ctx.method)) return answerOtherMethod(ctx, literal.methods);
    return routed(ctx, async () => {
      const allowed = methodsOf(router.match(ctx.path, ctx.method).path);
      return allowed.length ? answerOtherMethod(ctx, allowed) : next();
    });
  };
}

type Layers = ReturnType<Router['match']>['path'];

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

function methodsOf(layers: Layers): string[] {
  const methods = new Set(layers.flatMap((layer) => layer.methods));
  return METHOD_ORDER.filter((method) => methods.has(method));
}

/** OPTIONS lists the path's methods; any other method the path does not have is refused with them. */
function answerOtherMethod(ctx: ParameterizedContext<AppState>, allowed: string[]): void {
  ctx.set('Allow', allowed.join(', '));
  if (ctx.method === 'OPTIONS') {
    ctx.status = 200;
    ctx.body = '';
    return;
  }
  throw new GatewayError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allowed.join(', ')}`);
}

/** Route paths with a literal segment where another route's path has a parameter, with the methods they take. */
function literalPaths(router: Router, routes: RouteDef[]): { pattern: RegExp; methods: string[] }[] {
  const literals: { pattern: RegExp; methods: string[] }[] = [];
  for (const path of new Set(routes.map((route) => route.path))) {
    const sample = path.replace(/:\w+/g, 'x');
    const layers = router.match(sample, 'GET').path;
    const own = layers.filter((layer) => layer.path === path);
    if (own.length === 0 || !layers.some((layer) => layer.path !== path)) continue;
    literals.push({ pattern: own[0]!.regexp, methods: methodsOf(own) });
  }
  return literals;
}

type Handler = (ctx: ParameterizedContext<AppState>, next: Next) => unknown;

/** Method → path → handler, for every route path without parameters, keeping the router's choice when routes overlap. */
function staticRoutes(router: Router, routes: RouteDef[]): Map<string, Map<string, Handler>> {
  const exact = new Map<string, Map<string, Handler>>();
  for (const { method, path } of routes) {
    if (path.includes(':') || path.includes('(') || path.includes('*')) continue;
    const [first] = router.match(path, method).pathAndMethod;
    if (!first || first.stack.length !== 1) continue;
    let paths = exact.get(method);
    if (!paths) exact.set(method, (paths = new Map()));
    paths.set(path, first.stack[0] as unknown as Handler);
  }
  return exact;
}

/** Where audited routes write their entries (src/audit/log.ts). */
export interface AuditSink {
  record(entry: AuditRecord): void;
}

type RouteHandler = (koaCtx: unknown, next: unknown, seen: AuditedCall) => Promise<void>;

/** Refusals for capacity, not for what was asked: not recorded (an overload must not also flood the log). */
const NOT_AUDITED: ReadonlySet<string> = new Set(['SERVER_BUSY', 'SHUTTING_DOWN']);

/** Runs an admin route and records it, answered or refused, once the caller is known (anonymous refusals are not). */
function audited(spec: AuditAction | RouteAudit, handler: RouteHandler, sink: AuditSink) {
  const { action, target = defaultTarget, details } = typeof spec === 'string' ? { action: spec } : spec;
  return async function auditedRouteHandler(koaCtx: unknown, next: unknown): Promise<void> {
    const ctx = koaCtx as AppContext;
    const seen: AuditedCall = {};
    let failure: GatewayError | undefined;
    try {
      await handler(koaCtx, next, seen);
    } catch (err) {
      failure = toGatewayError(err);
      throw err;
    } finally {
      const principal = ctx.state.principal;
      // a forwarded request is audited by the node that answered it
      if (principal && !ctx.state.forwardedTo && !(failure && NOT_AUDITED.has(failure.code))) {
        const named = seen.params === undefined ? undefined : target(seen);
        const particulars = failure || !details ? undefined : details(seen);
        sink.record({
          actor: actorOf(principal),
          action,
          target: named === undefined || named === null ? null : String(named),
          requestId: ctx.state.requestId,
          outcome: failure ? 'failed' : 'succeeded',
          status: failure ? errorStatus[failure.code] : ctx.status,
          ...(failure ? { errorCode: failure.code } : {}),
          ...(particulars ? { details: particulars } : {}),
        });
      }
    }
  };
}

const defaultTarget = ({ params }: AuditedCall): string | undefined => params?.session ?? (params?.id === undefined ? undefined : String(params.id));

export function sessionOf(route: RouteDef, input: RouteInput): string | undefined {
  if (typeof route.sessionFrom === 'function') return route.sessionFrom(input);
  if (route.sessionFrom === 'params') return (input.params as { session?: string }).session;
  if (route.sessionFrom === 'body') return (input.body as { session?: string } | undefined)?.session;
  return undefined;
}
