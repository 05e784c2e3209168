// The OpenAPI 3.1 document, built from the route table and the schemas the daemon validates with, so it cannot drift:
// paths, parameters, bodies, success responses from the route records; error responses derived from the route's kind
// and src/http/error-status.ts; the 36 events as the document's webhooks.
import { actionOfRoute } from '../auth/client-actions.js';
import type { ErrorCode } from '../errors.js';
import { EVENT_TYPES } from '../events/catalogue.js';
import { eventEnvelopeSchema, eventPayloadSchemas } from '../events/schemas.js';
import type { GatewayConfig } from '../config/types.js';
import { errorStatus } from './error-status.js';
import { EVENT_DESCRIPTIONS } from './schemas/event-descriptions.js';
import { REQUEST_EXAMPLES } from './schemas/examples.js';
import { resourceSchemas } from './schemas/resources.js';
import type { RouteDef, RouteResponse } from './types.js';


export interface OpenApiOptions {
  version: string;
  /** the daemon's address (`servers`) and body limits come from it */
  config: GatewayConfig;
}

/**
 * `servers` is relative: the document is served by the daemon it describes, so "try it out" and generated clients
 * reach whatever origin served it, a reverse proxy's included (an absolute loopback URL broke both behind one).
 */
export const SERVERS = [{ url: '/', description: 'the daemon that serves this document (GATEWAY_HOST, GATEWAY_PORT, or the proxy in front of it)' }];

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, OperationObject>> };
type OperationObject = Record<string, unknown> & { operationId: string };

const STATUS_TEXT: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  431: 'HeadersTooLarge',
  429: 'TooManyRequests',
  500: 'InternalError',
  501: 'NotImplemented',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
};

const responseName = (status: number) => STATUS_TEXT[status] ?? `Error${status}`;
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** `/api/sessions/:session` → `/api/sessions/{session}` */
export function openApiPath(routerPath: string): string {
  return routerPath.replace(/:(\w+)/g, '{$1}');
}

export function buildOpenApiDocument(routes: RouteDef[], options: OpenApiOptions): OpenApiDocument {
  const statuses = new Set<number>();
  const paths: OpenApiDocument['paths'] = {};
  const methodsOf = new Map<string, number>();
  for (const route of routes) methodsOf.set(route.path, (methodsOf.get(route.path) ?? 0) + 1);
  let anyErrorUsed = false;
  for (const route of routes) {
    // a path that lacks some of the five methods answers the others 405 METHOD_NOT_ALLOWED (with `Allow`)
    const errors = errorStatusesOf(route, methodsOf.get(route.path)! < ROUTE_METHODS);
    const operation = operationOf(route, options.config.server, errors);
    anyErrorUsed ||= 'default' in (operation.responses as object);
    for (const status of errors) statuses.add(status);
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation;
  }
  const tags = [...new Set(routes.map(tagOf))].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Session Gateway',
      version: options.version,
      summary: 'A self-hosted WhatsApp session gateway: sessions, messages, webhooks, client tokens.',
      description:
        'REST API v1 of the session gateway daemon. Success bodies are `{"data": …}`; errors are ' +
        '`{"error": {"code", "message", "details?"}}` with the status of their code. Every response carries `X-Request-Id`. ' +
        'The prose reference is docs/API.md; events and their payloads are in the `webhooks` section and docs/EVENTS.md.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: SERVERS,
    tags,
    paths,
    webhooks: webhooksOf(),
    components: {
      schemas: { ...resourceSchemas, ...errorSchemas(), ...(anyErrorUsed ? { Error: anyErrorSchema() } : {}), ...eventSchemas() },
      responses: {
        ...Object.fromEntries([...statuses].sort((a, b) => a - b).map((status) => [responseName(status), errorResponse(status)])),
        ...(anyErrorUsed ? { Error: ANY_ERROR_RESPONSE } : {}),
      },
      headers: HEADERS,
      securitySchemes: {
        masterKey: { type: 'http', scheme: 'bearer', description: 'the master key (`GATEWAY_MASTER_KEY`): every route, including admin and sandbox routes' },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_…',
          description: 'an API key (`svc_…`) with the scope the operation lists; optionally limited to some sessions',
        },
        clientToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_ct_ + JWT',
          description: "a client token (`svc_ct_…`) for browser code: the client routes of one session, under that session's client rules",
        },
      },
    },
  };
}

/** GET, POST, PUT, PATCH, DELETE: the methods the router routes */
const ROUTE_METHODS = 5;

function operationOf(route: RouteDef, server: GatewayConfig['server'], errors: number[]): OperationObject {
  const parameters = [...parametersOf(route, route.schema.params, 'path'), ...parametersOf(route, route.schema.query, 'query')];
  // a route that can answer 202 does so when asked with Prefer: respond-async
  if (route.responses[202]) {
    parameters.push({
      name: 'Prefer',
      in: 'header',
      required: false,
      description: '`respond-async`: answer 202 at once; the outcome arrives as a command.result event',
      schema: { type: 'string', example: 'respond-async' },
    });
  }
  if (route.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'a key of your choosing (1–255 printable ASCII characters, e.g. a UUID): the same key and request within 24 hours ' +
        'sends once; a retry gets the first answer (`Idempotent-Replayed: true`), or 409 `IDEMPOTENCY_KEY_IN_FLIGHT` while ' +
        'the first is running, `IDEMPOTENCY_KEY_REUSED` for another request, `IDEMPOTENCY_OUTCOME_UNKNOWN` when the first ' +
        'failed after it may have sent',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    });
  }
  const operation: OperationObject = {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, accessDescription(route), rulesDescription(route)].filter(Boolean).join('\n\n'),
    tags: [tagOf(route)],
    ...(parameters.length ? { parameters } : {}),
    ...(route.schema.body ? { requestBody: requestBodyOf(route, server) } : {}),
    // an operation that only redirects (GET / → the console) says what else it answers as `default`: generators and
    // linters expect a response that is not an error or a redirect
    responses: { ...successResponses(route), ...errorResponses(errors), ...(hasSuccess(route) ? {} : { default: { $ref: '#/components/responses/Error' } }) },
    security: securityOf(route),
    ...(route.deprecated ? { deprecated: true } : {}),
    ...(route.rulesBeyondSchema?.length ? { 'x-rules-beyond-schema': route.rulesBeyondSchema } : {}),
  };
  if (route.access !== 'public' && route.access !== 'master' && route.access !== 'key') operation['x-required-scope'] = route.access;
  return operation;
}

function parametersOf(route: RouteDef, schema: object | undefined, where: 'path' | 'query'): Array<Record<string, unknown>> {
  const s = schema as { properties?: Record<string, { description?: string }>; required?: string[] } | undefined;
  return Object.entries(s?.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    description: property.description ?? parameterDescription(route, name, where),
    required: where === 'path' || (s?.required ?? []).includes(name),
    schema: property,
  }));
}

/** What a parameter is, by its name (a schema's own `description` comes first). */
const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  'path:session': 'the session name',
  'path:messageId': 'the WhatsApp message id',
  'path:mediaId': 'the media record id (a UUID, as in `mediaId` of messages and events)',
  'path:groupId': 'the group JID, `…@g.us` (or the part before `@g.us`)',
  'path:channelId': 'the channel (newsletter) JID, `…@newsletter` (or the number before `@newsletter`); responses call it `channelId` too',
  'path:chatId': 'the chat: a phone number (E.164), user JID, LID or group JID',
  'path:contactId': 'the contact: a phone number (E.164), user JID or LID',
  'path:labelId': 'the label id',
  'path:deliveryId': 'the delivery id (the event envelope id)',
  'path:name': 'the backup file name',
  'path:file': 'a file of the reference page',
  'query:limit': 'the page size, 1–1000 (default 1000)',
  'query:offset': 'how many items to skip (default 0); `X-Total-Count` gives the length of the whole list',
  'query:v': 'a cache-busting version; any value',
  'query:format': '`text` (the QR code as text) or `image` (a PNG data URL)',
  'query:session': 'only what concerns this session',
  'query:events': 'a comma list of event types (`*` or none: all of them)',
  'query:types': 'a comma list of event types (`*` or none: all of them)',
  'query:after': 'where to start: the events numbered after it (GET /api/events: a `seq`; the stream: a cursor, as `Last-Event-ID`)',
  'query:status': 'only the deliveries in this state',
  'query:action': 'only the entries of this action',
  'query:outcome': 'only the entries with this outcome',
  'query:inviteCode': 'the invite code: the part after https://chat.whatsapp.com/, not the link',
};

/** undefined for a parameter neither names: test/http/openapi.test.ts fails on it */
function parameterDescription(route: RouteDef, name: string, where: 'path' | 'query'): string | undefined {
  if (where === 'path' && name === 'id') return route.path.includes('/keys/') ? 'the API key id' : 'the webhook id';
  return PARAMETER_DESCRIPTIONS[`${where}:${name}`];
}

function rulesDescription(route: RouteDef): string | undefined {
  if (!route.rulesBeyondSchema?.length) return undefined;
  const rules = route.rulesBeyondSchema.map((r) => `\`${r.path}\` ${r.rule}`).join('; ');
  return `Rules beyond the schema (they depend on what is stored or on a file's bytes; 400 VALIDATION_FAILED naming the field): ${rules}.`;
}

function requestBodyOf(route: RouteDef, server: GatewayConfig['server']): Record<string, unknown> {
  const limit = route.bodyLimit === 'media' ? server.mediaBodyLimitBytes : server.bodyLimitBytes;
  const schema = route.schema.body as { required?: unknown[]; type?: string; properties?: object };
  const optional = schema.required === undefined && schema.type === 'object';
  const example = route.example?.body ?? REQUEST_EXAMPLES[route.operationId] ?? (isEmptyObject(schema) ? {} : undefined);
  return {
    required: !optional,
    description: `JSON, at most ${limit / 1024 / 1024} MB (413 PAYLOAD_TOO_LARGE beyond)`,
    'x-body-limit-bytes': limit,
    content: {
      'application/json': {
        schema: route.schema.body,
        ...(example !== undefined ? { example } : {}),
      },
    },
  };
}

const isEmptyObject = (schema: { type?: string; properties?: object }) => schema.type === 'object' && Object.keys(schema.properties ?? {}).length === 0;

/** a list paged by `limit` and `offset` (DESIGN §3): it counts the whole list; one paged by a cursor (`after`) does not */
const isList = (route: RouteDef) => {
  const query = (route.schema.query as { properties?: Record<string, unknown> } | undefined)?.properties;
  return Boolean(query?.limit && query.offset);
};

function successResponses(route: RouteDef): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses) as Array<[string, RouteResponse]>) {
    const headers: Record<string, unknown> = { 'X-Request-Id': headerRef('XRequestId') };
    if (isList(route)) headers['X-Total-Count'] = headerRef('XTotalCount');
    if (status === '202') headers['Preference-Applied'] = headerRef('PreferenceApplied');
    if (route.idempotent) headers['Idempotent-Replayed'] = headerRef('IdempotentReplayed');
    if ('raw' in response) {
      const types = Array.isArray(response.raw.contentType) ? response.raw.contentType : [response.raw.contentType];
      out[status] = { description: response.description, headers, content: Object.fromEntries(types.map((type) => [type, { schema: response.raw.schema ?? {} }])) };
      continue;
    }
    const example = route.example?.data !== undefined && status !== '202' ? { example: { data: route.example.data } } : {};
    out[status] = {
      description: response.description ?? (status === '201' ? 'created' : 'success'),
      headers,
      content: {
        'application/json': {
          schema: { type: 'object', additionalProperties: false, required: ['data'], properties: { data: response.data } },
          ...example,
        },
      },
    };
  }
  return out;
}

/**
 * The error statuses a route can answer, from what the route is: every route can be refused as bad input (400, e.g.
 * an unknown query parameter), fail (500) or be shed (503); keyed routes add 401/403/429; a route that names a thing
 * in its path or body can miss it (404); a route on a session can find it in the wrong state (409) and meet the
 * network (501, 502); a route that reads a body can get one too large (413) or not JSON (415); a backup or a cluster
 * route can find the store of the other kind (409).
 */
export function errorStatusesOf(route: RouteDef, otherMethodsRefused = true): number[] {
  // 408 (a body or headers too slow) and 431 (headers too large) can meet any request
  const statuses = new Set([400, 408, 431, 500, 503]);
  if (otherMethodsRefused) statuses.add(405);
  if (route.access !== 'public') [401, 403, 429].forEach((s) => statuses.add(s));
  const sessionScoped = route.path.includes(':session') || route.sessionFrom !== undefined;
  if (route.path.includes(':') || route.sessionFrom !== undefined) statuses.add(404);
  if (sessionScoped || route.path.startsWith('/api/sandbox/') || route.path.startsWith('/api/admin/settings')) [409, 501, 502].forEach((s) => statuses.add(s));
  if (route.schema.body) [413, 415].forEach((s) => statuses.add(s));
  if (route.refusable) statuses.add(422);
  // what depends on the store: backups of SQLite only, the cluster on PostgreSQL only
  if ((route.path === '/api/admin/backups' && route.method === 'POST') || route.path.startsWith('/api/cluster')) statuses.add(409);
  return [...statuses].sort((a, b) => a - b);
}

function errorResponses(statuses: number[]): Record<string, unknown> {
  return Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/${responseName(status)}` }]));
}

const hasSuccess = (route: RouteDef) => Object.keys(route.responses).some((status) => status.startsWith('2'));

const ANY_ERROR_RESPONSE = {
  description: 'any other answer: the error envelope, with the status of its code',
  headers: { 'X-Request-Id': headerRef('XRequestId') },
  content: { 'application/json': { schema: schemaRef('Error') } },
};

function anyErrorSchema(): object {
  return { anyOf: [...new Set(Object.values(errorStatus))].sort((a, b) => a - b).map((status) => schemaRef(`Error${status}`)), description: 'the error envelope of any status' };
}

function codesOf(status: number): ErrorCode[] {
  return (Object.keys(errorStatus) as ErrorCode[]).filter((code) => errorStatus[code] === status);
}

/** The error envelope, once for every code, and once per status with the codes of that status. */
function errorSchemas(): Record<string, object> {
  const envelope = (codes: ErrorCode[], description: string) => ({
    type: 'object',
    description,
    additionalProperties: false,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        additionalProperties: false,
        required: ['code', 'message'],
        properties: {
          code: { enum: codes },
          message: { type: 'string', description: 'a human sentence' },
          details: {
            type: 'array',
            description: 'the fields at fault',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['path', 'message'],
              properties: { path: { type: 'string', description: 'JSON pointer into the body, query or path parameters' }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  });
  // every status, not only those the routes list: answers outside a route (404, 405) have the envelope too
  const statuses = [...new Set(Object.values(errorStatus))].sort((a, b) => a - b);
  return Object.fromEntries(statuses.map((status) => [`Error${status}`, envelope(codesOf(status), `the error envelope of a ${status}`)]));
}

function errorResponse(status: number): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'X-Request-Id': headerRef('XRequestId') };
  if (status === 429 || status === 503) headers['Retry-After'] = headerRef('RetryAfter');
  return {
    description: `${codesOf(status).join(', ')}`,
    headers,
    content: { 'application/json': { schema: schemaRef(`Error${status}`) } },
  };
}

const HEADERS = {
  XRequestId: { description: 'the request id (yours, echoed, when it is 1–128 of `A-Za-z0-9._:-`)', schema: { type: 'string' } },
  XTotalCount: { description: 'the number of items in the whole list, not the page', schema: { type: 'integer', minimum: 0 } },
  RetryAfter: { description: 'seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  IdempotentReplayed: { description: '`true` when the answer is the first answer to the same `Idempotency-Key`, sent again', schema: { type: 'string', const: 'true' } },
  PreferenceApplied: { description: '`respond-async` when the answer is 202', schema: { type: 'string', const: 'respond-async' } },
};

/** the headers of every webhook delivery */
const WEBHOOK_HEADERS = {
  WebhookSignature: {
    required: true,
    description: 'HMAC-SHA256 of the raw body keyed with the webhook hmacKey, lowercase hex (`sha256=<hex>` with webhooks.signaturePrefix)',
    schema: { type: 'string', pattern: '^(sha256=)?[0-9a-f]{64}$' },
  },
  WebhookSignature256: {
    required: true,
    description: '`t=<unix s>,v1=<hex>`: HMAC-SHA256 keyed with the webhook hmacKey of `<t>.<raw body>`, on every delivery; refuse a t far from now to refuse replays',
    schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$' },
  },
  WebhookId: { required: true, description: 'the delivery id (= envelope id), the same on every retry', schema: { type: 'string' } },
  WebhookEvent: { required: true, description: 'the event type', schema: { type: 'string' } },
  WebhookTimestamp: { required: true, description: 'Unix seconds when this attempt was made', schema: { type: 'integer' } },
  WebhookAttempt: { required: true, description: '1 for the first try, 2 for the first retry, …', schema: { type: 'integer', minimum: 1 } },
};

function securityOf(route: RouteDef): Array<Record<string, string[]>> {
  if (route.access === 'public') return [];
  if (route.access === 'master') return [{ masterKey: [] }];
  if (route.access === 'key') return [{ masterKey: [] }, { apiKey: [] }];
  const action = actionOfRoute(route.method, route.path);
  return [{ masterKey: [] }, { apiKey: [route.access] }, ...(action ? [{ clientToken: [action] }] : [])];
}

function accessDescription(route: RouteDef): string {
  if (route.access === 'public') return 'No key needed.';
  if (route.access === 'master') return 'Needs the master key.';
  if (route.access === 'key') return 'Needs the master key or any API key.';
  const action = actionOfRoute(route.method, route.path);
  return (
    `Needs the master key or an API key with the \`${route.access}\` scope` +
    (action ? `, or a client token of the session whose rules allow \`${action}\`.` : '.')
  );
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  Health: 'liveness, metrics, this document and its reference page (/docs)',
  Sessions: 'linked WhatsApp accounts: lifecycle and pairing',
  'API keys': 'scoped API keys',
  Messages: 'send, edit, delete, react, typing, read receipts, stars',
  'Client access': 'client tokens for browser code and the client rules that govern them',
  Media: 'media records, downloads and S3 persistence',
  Settings: 'run-time settings (master key)',
  Operations: 'backups and the status report (master key)',
  Audit: 'the audit log of admin actions',
  Events: 'the live event stream',
  Webhooks: 'webhooks and their delivery log',
  Groups: 'groups, participants and invites',
  Channels: 'channels (newsletters)',
  Presence: 'own presence and contacts’ presence',
  Contacts: 'contacts, number checks, blocking',
  Labels: 'labels of business accounts',
  Sandbox: 'the simulated network of the sandbox engine (master key)',
};

function tagOf(route: RouteDef): string {
  const p = route.path;
  if (p.startsWith('/api/sandbox/')) return 'Sandbox';
  if (p === '/api/health' || p === '/metrics' || p === '/api/openapi.json' || p === '/docs' || p.startsWith('/docs/')) return 'Health';
  if (p.endsWith('/keys') || p.includes('/keys/')) return 'API keys';
  if (p.startsWith('/api/admin/settings')) return 'Settings';
  if (p.startsWith('/api/admin/backups') || p === '/api/admin/status') return 'Operations';
  if (p.startsWith('/api/admin/audit')) return 'Audit';
  if (p.startsWith('/api/client-tokens') || p.includes('/client-rules')) return 'Client access';
  if (p.startsWith('/api/events')) return 'Events';
  if (p.startsWith('/api/webhooks')) return 'Webhooks';
  if (p.startsWith('/api/messages') || p.includes('/messages/')) return 'Messages';
  const resource = /^\/api\/sessions\/:session\/(\w+)/.exec(p)?.[1];
  const byResource: Record<string, string> = { media: 'Media', groups: 'Groups', channels: 'Channels', presence: 'Presence', contacts: 'Contacts', labels: 'Labels' };
  return (resource && byResource[resource]) ?? 'Sessions';
}

const pascal = (type: string) => type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
export const payloadSchemaName = (type: string) => `${pascal(type)}Payload`;

function eventSchemas(): Record<string, object> {
  return {
    EventEnvelope: eventEnvelopeSchema,
    ...Object.fromEntries(EVENT_TYPES.map((type) => [payloadSchemaName(type), eventPayloadSchemas[type]])),
  };
}

/** Each event as an OpenAPI 3.1 webhook: the signed POST the gateway makes to a registered URL. */
function webhooksOf(): Record<string, unknown> {
  const signature = ['WebhookSignature', 'WebhookSignature256', 'WebhookId', 'WebhookEvent', 'WebhookTimestamp', 'WebhookAttempt'];
  const headerName: Record<string, string> = {
    WebhookSignature: 'X-Webhook-Signature',
    WebhookSignature256: 'X-Webhook-Signature-256',
    WebhookId: 'X-Webhook-Id',
    WebhookEvent: 'X-Webhook-Event',
    WebhookTimestamp: 'X-Webhook-Timestamp',
    WebhookAttempt: 'X-Webhook-Attempt',
  };
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `on${pascal(type)}`,
          summary: `the ${type} event, delivered to each matching webhook`,
          description: `${EVENT_DESCRIPTIONS[type]} Delivered as a signed POST to every enabled webhook whose events and session match, and on GET /api/events/stream.`,
          tags: ['Events'],
          parameters: signature.map((name) => {
            const { required, description, schema } = WEBHOOK_HEADERS[name as keyof typeof WEBHOOK_HEADERS] as { required: boolean; description: string; schema: object };
            return { name: headerName[name], in: 'header', required, description, schema };
          }),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { allOf: [schemaRef('EventEnvelope'), { properties: { event: { const: type }, payload: schemaRef(payloadSchemaName(type)) } }] },
              },
            },
          },
          responses: {
            '2XX': { description: 'any 2xx acknowledges the delivery; anything else (a 3xx too), or no answer in time, is retried' },
          },
          security: [],
        },
      },
    ]),
  );
}
