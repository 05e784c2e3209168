// The Koa application: middleware in order, on one screen, then the routes.
import Koa from 'koa';
import { DEFAULT_CONFIG } from '../config/defaults.js';
import type { Logger } from '../logger.js';
import { UNMATCHED_ROUTE, type Metrics } from '../metrics.js';
import { throwIfUnanswered, writeError } from './middleware/errors.js';
import { checkPathEncoding, closeAfterAnswer, InFlightCap } from './middleware/capacity.js';
import type { BodyLimits } from './middleware/json-body.js';
import { assignRequestId } from './middleware/request-id.js';
import { refuseNonOriginForm } from './middleware/request-target.js';
import { setSecurityHeaders } from './middleware/security-headers.js';
import { refuseWhileDraining } from './middleware/shutdown-gate.js';
import type { Authenticators } from './middleware/authenticate.js';
import type { IdempotentRequests } from './idempotency.js';
import { buildRouter, type AuditSink, type ClientGuard } from './router.js';
import type { Forwarder } from '../cluster/forward.js';
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
  /** the tick transaction's account of commits: an answer waits for the writes made since its request began */
  commits?: { mark(): number; committedSince(mark: number): Promise<void> | undefined };
  /** middleware that runs before authentication (CORS for client tokens) */
  early?: Koa.Middleware<AppState>[];
  /** where routes marked `audit` record each call (the audit log) */
  audit?: AuditSink;
  /** in a cluster: sends a request for a session another node runs on to that node */
  forwarder?: Forwarder;
  /** where routes marked `idempotent` keep their Idempotency-Key records */
  idempotency?: IdempotentRequests;
}

export function createApp(options: AppOptions): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  const bodyLimits = options.bodyLimits ?? DEFAULT_BODY_LIMITS;
  const route = buildRouter(
    options.routes,
    options.auth,
    bodyLimits,
    options.clientGuard,
    options.maxRequestsInFlightPerKey ?? DEFAULT_CONFIG.server.maxRequestsInFlightPerKey,
    options.audit,
    options.forwarder,
    options.idempotency,
  );
  const inFlight = new InFlightCap(options.maxRequestsInFlight ?? DEFAULT_CONFIG.server.maxRequestsInFlight);
  const { commits, isDraining, logger, metrics } = options;
  // one preallocated latency series per route record, by its path pattern
  const latencyOf = new Map(options.routes.map((def) => [def, metrics.httpLatency.series(def.method, def.path)]));
  const unmatched = metrics.httpLatency.series(UNMATCHED_ROUTE.method, UNMATCHED_ROUTE.path);

  // What every request goes through, in order, as plain calls in one middleware: each Koa layer costs a promise and a
  // bound function per request, and this is all the daemon's cheapest route does besides answering.
  app.use(async function handleRequest(ctx, next) {
    const started = performance.now();
    const since = commits?.mark();
    assignRequestId(ctx);
    setSecurityHeaders(ctx);
    try {
      refuseNonOriginForm(ctx);
      refuseWhileDraining(ctx, isDraining);
      let holdsPlace = inFlight.enter(ctx.path);
      // the caller's share is held as long as the global place (through the wait for the commit), or it would not bound it
      const leavePlaces = () => {
        if (holdsPlace) inFlight.leave();
        holdsPlace = false;
        const releaseShare = ctx.state.releaseShare;
        ctx.state.releaseShare = undefined;
        releaseShare?.();
      };
      ctx.state.leavePlaces = leavePlaces;
      try {
        checkPathEncoding(ctx.path);
        await next();
        // a 2xx never reports what a crash could still lose: the answer waits for the commit of the request's writes (and
        // of what it may have read of others' writes); a request no route took read and wrote nothing, and does not wait
        const commit = ctx.state.route ? commits?.committedSince(since!) : undefined;
        if (commit) await commit;
      } finally {
        leavePlaces();
      }
      throwIfUnanswered(ctx);
    } catch (err) {
      writeError(ctx, err, logger);
    } finally {
      metrics.httpRequests.inc({ method: ctx.method, status: String(ctx.status) });
      // a body left unread (an early refusal) is not drained: the connection closes once the answer is written
      closeAfterAnswer(ctx);
      const matched = ctx.state.route;
      (matched ? (latencyOf.get(matched) ?? unmatched) : unmatched).observe((performance.now() - started) / 1000);
    }
  });
  for (const middleware of options.early ?? []) app.use(middleware);
  app.use(route);

  app.on('error', (err: Error) => logger.debug({ err }, 'connection error'));
  return app;
}
