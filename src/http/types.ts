// Types shared by the HTTP layer: per-request state, the route record, and the context handlers receive.
import type { ParameterizedContext } from 'koa';
import type { AuditAction } from '../audit/actions.js';
import type { Principal, RouteAccess } from '../auth/scopes.js';

export interface AppState {
  requestId: string;
  principal?: Principal;
  /** parsed JSON body (undefined when the request had none) */
  body?: unknown;
  /** gives back the caller's in-flight slot (server.maxRequestsInFlightPerKey); the in-flight cap calls it once answered */
  releaseShare?: () => void;
  /** gives back the request's global in-flight place and the caller's share now (once): it waits, it does not work */
  leavePlaces?: () => void;
  /**
   * A handler's request now waits (a held send in the governor's queue) rather than works: it gives back its in-flight
   * places and holds one of the caller's waiting places instead; the returned function gives that back (call it once).
   * Undefined when the caller holds all its waiting places (server.maxRequestsInFlightPerKey) already.
   */
  park?: () => (() => void) | undefined;
  /** the route record that matched (metrics label requests with its path pattern) */
  route?: RouteDef;
  /** in a cluster, the node this request was sent on to (it answered, and audits it) */
  forwardedTo?: string;
}

export type AppContext = ParameterizedContext<AppState> & { params: Record<string, string> };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSchemas {
  params?: object;
  query?: object;
  body?: object;
}

/** What a handler gets: the validated inputs, plus the raw context for headers and status. */
export interface RouteInput<B = any, Q = any, P = any> {
  body: B;
  query: Q;
  params: P;
  ctx: AppContext;
}

/** One success answer of a route: the schema of `data` in `{data}`, or a body of another media type. */
export type RouteResponse = { data: object; description?: string } | { raw: { contentType: string | string[]; schema?: object }; description: string };

/**
 * A rule the schema cannot say: it depends on what is stored (S3 fields required while no storage is set), on the
 * bytes of a file, or compares values (a mention must appear in the text). Documented on the operation
 * (`x-rules-beyond-schema`); the only 400 VALIDATION_FAILED the positive fuzz lets a schema-valid request get.
 */
export interface RuleBeyondSchema {
  /** JSON pointer of the field the 400 names */
  path: string;
  rule: string;
}

export interface RouteDef {
  method: HttpMethod;
  /** @koa/router path, e.g. /api/sessions/:session */
  path: string;
  access: RouteAccess;
  schema: RouteSchemas;
  /** one-line description (docs and the route table test) */
  summary: string;
  /** more than the summary says: the operation's description, before who may call it */
  description?: string;
  /** an old form kept working (marked deprecated in the document); its description names the form to use */
  deprecated?: true;
  /** the 400s a request the schema accepts may still get (see RuleBeyondSchema) */
  rulesBeyondSchema?: RuleBeyondSchema[];
  /** the OpenAPI operationId: a verb and a noun, as generated clients call it (`sendMessage`) */
  operationId: string;
  /** what the route answers on success, by status (errors come from src/http/openapi.ts) */
  responses: Partial<Record<200 | 201 | 202 | 302, RouteResponse>>;
  /** request body and `data` examples for the document */
  example?: { body?: unknown; data?: unknown };
  /** where the session this route acts on is found, for session-limited keys and client tokens */
  sessionFrom?: 'params' | 'body' | ((input: RouteInput) => string | undefined);
  /** in a cluster, a request for a session no node runs goes to the least-loaded node (create, start) */
  startsSession?: true;
  /**
   * a route that sends: with `Idempotency-Key` it runs at most once per key and caller within 24 hours, a retry getting
   * the first answer (src/http/idempotency.ts)
   */
  idempotent?: true;
  /** a route that sends a message WhatsApp may refuse at once: 422 MESSAGE_REFUSED (429 MESSAGE_RATE_LIMITED is listed anyway) */
  refusable?: true;
  /** routes that take base64 media read bodies up to server.mediaBodyLimitBytes; the others up to server.bodyLimitBytes */
  bodyLimit?: 'media';
  /** an admin action: the audit log records every call of it by a known caller, answered or refused */
  audit?: AuditAction | RouteAudit;
  /** returns the value of `data`; undefined when the handler wrote ctx.body itself */
  handler(input: RouteInput): unknown | Promise<unknown>;
}

/** What an audited route has seen when it records: validated inputs (undefined when refused before) and its result. */
export interface AuditedCall {
  params?: any;
  body?: any;
  /** the handler's result, when it succeeded */
  data?: any;
}

/** How an audited route names what it acted on. Only ids, names and field names: never a value that may be secret. */
export interface RouteAudit {
  action: AuditAction;
  /** what was acted on; default: the `session` or else `id` path parameter */
  target?: (call: AuditedCall) => string | number | null | undefined;
  /** non-secret particulars (a key's name and scopes, the names of the fields an update changed) */
  details?: (call: AuditedCall) => Record<string, unknown> | undefined;
}
