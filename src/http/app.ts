// The Koa application: middleware in order, on one screen, then the routes.
import Koa from 'koa';
import { DEFAULT_CONFIG } from '../config/defaults.js';
import type { Logger } from '../logger.js';
import { UNMATCHED_ROUTE, type Metrics } from '../metrics.js';
import { errorHandler } from './middleware/errors.js';
import { discardUnreadBody, inFlightCap, wellEncodedPath } from './middleware/capacity.js';
import type { BodyLimits } from './middleware/json-body.js';
import { requestId } from './middleware/request-id.js';
import { shutdownGate } from './middleware/shutdown-gate.js';
import type { Authenticators } from './middleware/authenticate.js';
import { buildRouter, type AuditSink, type ClientGuard } from './router.js';
import type { AppState, RouteDef } from './types.js';

const DEFAULT_BODY_LIMITS: BodyLimits = {
  defaultBytes: DEFAULT_CONFIG.server.bodyLimitBytes,
  mediaBytes: DEFAULT_CONFIG.server.mediaBodyLimitBytes,
  maxLargeBodies: DEFAULT_CONFIG.server.maxLargeBodies,
};

export interface AppOptions {
  routes: RouteDef[];
  auth: Authenticators;
  clientGuard?: ClientGuard;
  /** bodies are read inside the route, after authentication, with the route's limit (default: server.* defaults) */
  bodyLimits?: BodyLimits;
  /** requests in flight past which new ones get 503 (health and metrics exempt) */
  maxRequestsInFlight?: number;
  /** requests in flight one principal (key, master key, client token) may hold; past it 503 for that principal only */
  maxRequestsInFlightPerKey?: number;
  logger: Logger;
  metrics: Metrics;
  isDraining: () => boolean;
  /** settles once the writes made so far are committed (undefined when none wait): answers wait for it */
  committed?: () => Promise<void> | undefined;
  /** middleware that runs before authentication (CORS for client tokens) */
  early?: Koa.Middleware<AppState>[];
  /** where routes marked `audit` record each call (the audit log) */
  audit?: AuditSink;
}

export function createApp(options: AppOptions): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  const bodyLimits = options.bodyLimits ?? DEFAULT_BODY_LIMITS;
  const router = buildRouter(
    options.routes,
    options.auth,
    bodyLimits,
    options.clientGuard,
    options.maxRequestsInFlightPerKey ?? DEFAULT_CONFIG.server.maxRequestsInFlightPerKey,
    options.audit,
  );

  app.use(requestId());
  // a refused body is discarded unread, so that the client reads its answer; only a body larger than any route takes is cut
  app.use(discardUnreadBody(bodyLimits.mediaBytes));
  app.use(countResponses(options.metrics, options.routes));
  app.use(errorHandler(options.logger));
  app.use(shutdownGate(options.isDraining));
  app.use(inFlightCap(options.maxRequestsInFlight ?? DEFAULT_CONFIG.server.maxRequestsInFlight));
  app.use(wellEncodedPath());
  if (options.committed) app.use(answerAfterCommit(options.committed));
  for (const middleware of options.early ?? []) app.use(middleware);
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));

  app.on('error', (err: Error) => options.logger.debug({ err }, 'connection error'));
  return app;
}

/** A 2xx never reports what a crash could still lose: the answer waits for the commit of the request's writes. */
function answerAfterCommit(committed: () => Promise<void> | undefined): Koa.Middleware<AppState> {
  return async function answerAfterCommitMiddleware(_ctx, next) {
    await next();
    await committed();
  };
}

/** Counts answers by status, and times each by its route's path pattern (one preallocated series per route record). */
function countResponses(metrics: Metrics, routes: RouteDef[]): Koa.Middleware<AppState> {
  const latencyOf = new Map(routes.map((route) => [route, metrics.httpLatency.series(route.method, route.path)]));
  const unmatched = metrics.httpLatency.series(UNMATCHED_ROUTE.method, UNMATCHED_ROUTE.path);
  return async function countResponsesMiddleware(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.httpRequests.inc({ method: ctx.method, status: String(ctx.status) });
      const route = ctx.state.route;
      (route ? (latencyOf.get(route) ?? unmatched) : unmatched).observe((performance.now() - started) / 1000);
    }
  };
}
