// The route fuzzer: one fast-check arbitrary of HTTP requests over every route of the table, the fixtures that let
// valid inputs reach the handlers, the per-response properties and the end-of-run checks. Used by
// test/fuzz/routes.test.ts (fixed seed, bounded count) and test/fuzz/run.ts (`npm run fuzz -- --runs N --seed S`).
import fc from 'fast-check';
import { Pool, errors as undiciErrors } from 'undici';
import { routeTable } from '../../src/http/document.js';
import { errorStatus } from '../../src/http/error-status.js';
import type { RouteDef } from '../../src/http/types.js';
import { MAX_SANDBOX_MESSAGES } from '../../src/http/schemas/sandbox.js';
import { checkResponse, ContractDrift } from '../helpers/contract.js';
import { MASTER_KEY, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange } from '../helpers/raw-http.js';
import { almostValid, junkBodyText, ODD_ENCODINGS, queryString, segment, toJsonText, valid, type Hints } from './arbitraries.js';

export { routeTable };

export const routeId = (route: Pick<RouteDef, 'method' | 'path'>): string => `${route.method} ${route.path}`;

export const REQUEST_TIMEOUT_MS = 10_000;
const EVENT_STREAM = 'GET /api/events/stream';

/** Sessions the fuzz never aims a destructive route at: the valid send at the end goes through them. */
const MAIN = 'fz-main';
const PEER = 'fz-peer';
const MAIN_PHONE = '+15550000001';
const PEER_PHONE = '+15550000002';
/** Sessions destructive routes act on (delete, stop, logout, disconnect, silence, client rules): recreated by `maintain`. */
const DISPOSABLE = ['fz-temp1', 'fz-temp2'];
const DESTRUCTIVE = new Set([
  'DELETE /api/sessions/:session',
  'POST /api/sessions/:session/stop',
  'POST /api/sessions/:session/logout',
  'POST /api/sessions/:session/restart',
  'POST /api/sandbox/sessions/:session/disconnect',
  'POST /api/sandbox/sessions/:session/faults/silence',
  'PUT /api/sessions/:session/client-rules',
  'DELETE /api/sessions/:session/client-rules',
]);

/**
 * Sandbox load generators answer once they ingested everything they were asked for (up to 100,000 messages, by
 * contract: bench/ uses them), so a valid maximum legitimately takes longer than the fuzz's timeout. Their size
 * fields are clamped to a budget in the generated body; every other input to them is fuzzed as usual.
 */
const LOAD_FIELDS: Record<string, string> = {
  'POST /api/sandbox/sessions/:session/inbound/burst': 'count',
  'POST /api/sandbox/sessions/:session/history': 'messages',
};
const LOAD_BUDGET = 2000;

export function clampLoad(route: string, body: string | undefined): string | undefined {
  const field = LOAD_FIELDS[route];
  if (!field || body === undefined) return body;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const value = parsed?.[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= LOAD_BUDGET || value > MAX_SANDBOX_MESSAGES) return body;
    return JSON.stringify({ ...parsed, [field]: LOAD_BUDGET });
  } catch {
    return body;
  }
}

export type Auth = 'master' | 'limited' | 'client' | 'none' | 'garbage' | 'forged' | 'odd';
type Mode = 'valid' | 'almost' | 'junk';

/** One generated request. Printed (shortened) when a property fails, so it can be read and replayed. */
export interface FuzzCase {
  route: string;
  mode: Mode;
  auth: Auth;
  /** which fixture or fuzz-created id a `__fx_…__` reference resolves to */
  pick?: number;
  /** which garbage, forged or odd Authorization header */
  authVariant?: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Fixture ids the fuzz refers to; they change when a fuzzed request deletes one and `maintain` recreates it. */
type RefName = 'webhook' | 'group' | 'channel' | 'label' | 'media' | 'message' | 'delivery' | 'key1' | 'key2';

export interface Fixtures {
  limitedKey: string;
  clientToken: string;
  clientTokenAt: number;
  refs: Record<RefName, string>;
  /** ids of messages and media the fuzz itself created: a later request may act on them (download what it sent) */
  learned: Partial<Record<'message' | 'media', string[]>>;
  settings: Record<string, unknown>;
  sessionShape: string[];
}

/**
 * A generated value names a fixture by a token resolved when the request is sent, so a shrunk or replayed case
 * means "the current group", whatever its id is in this run. The token survives encodeURIComponent.
 */
const ref = (name: RefName): string => `__fx_${name}__`;
const REF_TOKEN = /__fx_(\w+?)__/g;

const LEARNED_MAX = 64;

function learn(fx: Fixtures, o: Outcome): void {
  if (o.status < 200 || o.status > 299 || !/^application\/json\b/.test(String(o.headers['content-type'] ?? ''))) return;
  let data: Record<string, unknown> | undefined;
  try {
    data = (JSON.parse(o.text) as { data?: Record<string, unknown> }).data;
  } catch {
    return; // problemOf reports it
  }
  if (!data || typeof data !== 'object') return;
  for (const [field, pool] of [['messageId', 'message'], ['mediaId', 'media']] as const) {
    const value = data[field];
    if (typeof value !== 'string') continue;
    const list = (fx.learned[pool] ??= []);
    list.push(value);
    if (list.length > LEARNED_MAX) list.shift();
  }
}

/** `pick` chooses between the fixture and what the fuzz created (the same case picks the same one in the same state). */
export function resolveRefs(text: string, fx: Fixtures, encode: boolean, pick = 0): string {
  return text.replace(REF_TOKEN, (token, name: string) => {
    const learned = fx.learned[name as 'message' | 'media'] ?? [];
    const choice = pick % (learned.length + 1);
    const value = choice === 0 ? fx.refs[name as RefName] : learned[choice - 1];
    return value === undefined ? token : encode ? encodeURIComponent(value) : value;
  });
}

const short = (text: string, max = 300): string => (text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);

function printable(c: FuzzCase): FuzzCase & { [fc.toStringMethod](): string } {
  return Object.assign(c, {
    [fc.toStringMethod]: () =>
      JSON.stringify({ ...c, path: short(c.path), headers: c.headers, body: c.body === undefined ? undefined : short(c.body) }),
  });
}

export function hintsFor(route: RouteDef): Hints {
  const id = routeId(route);
  const keyRoute = route.path.includes('/keys/');
  const phones = [MAIN_PHONE, PEER_PHONE, '15550000003', '+9990000000'];
  const chats = [PEER_PHONE, '15550000002@s.whatsapp.net', ref('group'), 'status@broadcast'];
  return {
    session: DESTRUCTIVE.has(id) ? DISPOSABLE : [MAIN, PEER, ...DISPOSABLE],
    messageId: [ref('message')],
    groupId: [ref('group')],
    channelId: [ref('channel')],
    labelId: [ref('label')],
    mediaId: [ref('media')],
    deliveryId: [ref('delivery')],
    id: keyRoute ? [ref('key1'), ref('key2')] : [ref('webhook')],
    chatId: chats,
    chatIds: [chats],
    contactId: phones,
    phoneNumber: phones,
    phoneNumbers: [phones],
    participants: [[PEER_PHONE]],
    participant: [PEER_PHONE],
    from: [PEER_PHONE, '+15550000009'],
    to: [PEER_PHONE],
    text: ['hello from the fuzzer'],
    url: ['http://127.0.0.1:9/hook'],
    type: ['text'],
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Message contents that hold together across fields (a schema alone cannot say a text message has no `url`). */
function contents(): Record<string, unknown>[] {
  return [
    { type: 'text', text: 'hi' },
    { type: 'text', text: 'quoted', quotedMessage: { messageId: ref('message') } },
    { type: 'text', text: 'hi @15550000002', mentions: [PEER_PHONE] },
    { type: 'image', base64: PNG, mimeType: 'image/png', caption: 'c' },
    { type: 'sticker', base64: PNG, mimeType: 'image/webp' },
    { type: 'file', base64: 'aGVsbG8=', mimeType: 'text/plain', filename: 'a.txt' },
    { type: 'voice', base64: 'aGVsbG8=', mimeType: 'audio/ogg', ptt: true },
    { type: 'image', url: 'https://127.0.0.1:9/x.png' },
    { type: 'poll', pollTitle: 'p', pollOptions: ['a', 'b'], pollMultiSelect: true },
    { type: 'location', latitude: 1.5, longitude: -2.25, name: 'n', address: 'a' },
    { type: 'contact', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:A\nTEL:+15550000002\nEND:VCARD' },
  ];
}

/** Hand-written valid bodies for routes whose fields depend on each other; mutated like the generated ones. */
const EXAMPLES: Record<string, () => unknown[]> = {
  'POST /api/messages/send': () => contents().flatMap((c) => [{ session: MAIN, chatId: PEER_PHONE, ...c }, { session: MAIN, chatId: ref('group'), ...c }]),
  'POST /api/sandbox/sessions/:session/inbound': () => contents().map((c) => ({ from: PEER_PHONE, ...c })),
  'POST /api/client-tokens': () => [{ session: MAIN, ephemeralId: 'e1', ttlSeconds: 60 }],
  'PUT /api/sessions/:session/client-rules': () => [{ recipientMode: 'conversation', enabled: true, allowedActions: 'send_message', rateLimitPerMinute: 5, allowedOrigins: 'https://app.example' }],
  'POST /api/webhooks': () => [{ url: 'http://127.0.0.1:9/x', events: ['message.received'], session: MAIN, headers: [{ name: 'X-A', value: 'b' }], retries: { attempts: 1, delaySeconds: 1, policy: 'constant' } }],
  'PUT /api/webhooks/:id': () => [{ enabled: false }, { session: null }, { events: ['*'] }],
  'POST /api/sessions/:session/groups/:groupId/participants': () => [{ session: MAIN, participants: [PEER_PHONE] }],
  'POST /api/sessions/:session/contacts/check': () => [{ phoneNumbers: [PEER_PHONE, '+9990000000'] }, [PEER_PHONE]],
  'POST /api/sessions/:session/labels/:labelId/chats': () => [{ chatIds: [PEER_PHONE] }, [PEER_PHONE]],
};

const AUTHS: Auth[] = ['master', 'master', 'master', 'master', 'master', 'limited', 'limited', 'client', 'client', 'none', 'garbage', 'forged', 'odd'];
const JSON_TYPE = 'application/json';
const ODD_TYPES = ['text/plain', '', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/merge-patch+json', 'application/jsonx', 'APPLICATION/JSON', '*/*'];

function routeCase(route: RouteDef): fc.Arbitrary<FuzzCase> {
  const hints = hintsFor(route);
  // junk mode may send another method to the path (DELETE to GET /api/sessions/:session): only disposable sessions there
  const junkHints = { ...hints, session: DISPOSABLE };
  const paramNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const paramSchemas = ((route.schema.params as { properties?: Record<string, object> } | undefined)?.properties ?? {}) as Record<string, object>;
  const takesBody = route.method !== 'GET';
  return fc.constantFrom<Mode>('valid', 'valid', 'almost', 'almost', 'almost', 'junk').chain((mode) => {
    const params = fc.tuple(...paramNames.map((name) => segment(paramSchemas[name], mode === 'junk' ? junkHints : hints, name, mode === 'valid' ? 'valid' : 'almost')));
    const query = queryString(route.schema.query, hints, mode === 'valid' ? 'valid' : 'almost');
    const examples = EXAMPLES[routeId(route)]?.();
    const validBody = examples ? fc.oneof(valid(route.schema.body, hints), fc.constantFrom(...examples)) : valid(route.schema.body, hints);
    const body: fc.Arbitrary<unknown> = !takesBody
      ? fc.constant(undefined)
      : mode === 'valid'
        ? validBody
        : mode === 'almost'
          ? almostValid(validBody)
          : junkBodyText;
    const method = mode === 'junk' ? fc.oneof(fc.constantFrom(route.method, route.method, 'PUT', 'PATCH', 'OPTIONS', 'HEAD', 'GET', 'DELETE', 'POST'), oddMethod) : fc.constant(route.method);
    const form = mode === 'junk' ? targetForm : fc.constant<TargetForm>('origin');
    const contentType = mode === 'junk' ? fc.constantFrom(JSON_TYPE, undefined, ...ODD_TYPES) : fc.constant(JSON_TYPE);
    const extraHeaders = fc.record(
      {
        Origin: fc.constantFrom('http://fuzz.example', 'null', 'https://app.example', '%zz'),
        Prefer: fc.constantFrom('respond-async', 'respond-async, wait=1', 'x'),
        'X-Request-Id': fc.constantFrom('fuzz-1', '', 'a'.repeat(200), '../..'),
        'Content-Encoding': fc.constantFrom('gzip', 'br', 'identity', 'x-unknown'),
        Accept: fc.constantFrom('text/html', 'application/xml', '*/*'),
      },
      { requiredKeys: [] },
    );
    const coherent = fc.constantFrom(true, true, true, false);
    return fc.record({ auth: fc.constantFrom(...AUTHS), authVariant: fc.nat({ max: 99 }), pick: fc.nat({ max: 999 }), params, query, body, method, form, contentType, extraHeaders, coherent }).map((r) => {
      let path = route.path;
      paramNames.forEach((name, i) => (path = path.replace(`:${name}`, r.params[i]!)));
      // most bodies name the same session as the path (a route refuses a body naming another)
      const sessionAt = paramNames.indexOf('session');
      if (r.coherent && sessionAt >= 0 && isObject(r.body) && typeof r.body.session === 'string') {
        r.body = { ...r.body, session: safeDecode(r.params[sessionAt]!) };
      }
      r.body = r.body === undefined || typeof r.body === 'string' && mode === 'junk' ? r.body : toJsonText(r.body);
      if (r.query) path += `?${r.query}`;
      path = inForm(path, r.form);
      const headers: Record<string, string> = { ...(r.extraHeaders as Record<string, string>) };
      const sendsBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
      if (sendsBody && r.contentType !== undefined) headers['Content-Type'] = r.contentType;
      return printable({ route: routeId(route), mode, auth: r.auth, ...(['garbage', 'forged', 'odd'].includes(r.auth) ? { authVariant: r.authVariant } : {}), ...(/__fx_(message|media)__/.test(path + (r.body ?? '')) ? { pick: r.pick } : {}), method: r.method, path, headers, ...(sendsBody ? { body: clampLoad(routeId(route), r.body as string) } : {}) });
    });
  });
}

/**
 * Methods no route has, besides the usual ones a path may not take: HTTP's and WebDAV's, invented ones, CONNECT (sent
 * on a raw socket), and lowercase or mixed-case spellings (not HTTP/1.1 tokens Node accepts: its parser refuses them).
 */
export const ODD_METHODS = ['TRACE', 'QUERY', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'REPORT', 'PURGE', 'LINK', 'M-SEARCH', 'BREW', 'CONNECT', 'get', 'Post', 'delete', 'pAtCh'];
const oddMethod = fc.constantFrom(...ODD_METHODS);

/** How the request target is written: a path (origin-form), the absolute URL of it, `*`, or `host:port`. */
type TargetForm = 'origin' | 'absolute' | 'absolute-other-host' | 'asterisk' | 'authority';
const targetForm = fc.constantFrom<TargetForm>('origin', 'origin', 'origin', 'origin', 'absolute', 'absolute-other-host', 'asterisk', 'authority');

function inForm(path: string, form: TargetForm): string {
  switch (form) {
    case 'absolute':
      return `http://127.0.0.1${path}`;
    case 'absolute-other-host':
      return `https://example.com:8443${path}`;
    case 'asterisk':
      return '*';
    case 'authority':
      return 'localhost:1';
    default:
      return path;
  }
}

/** Any route, with an equal share each, plus requests to paths no route has. */
export function fuzzCases(routes: RouteDef[]): fc.Arbitrary<FuzzCase> {
  const stray = fc
    .tuple(fc.oneof(fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'OPTIONS'), oddMethod), fc.constantFrom('/api/', '/api/sessions/', '/api/nope', '/', '/api/sessions/fz-temp1/', '//api//sessions', '/api/sandbox/sessions/'), fc.constantFrom('', ...ODD_ENCODINGS), fc.constantFrom(...AUTHS), targetForm)
    .map(([method, prefix, tail, auth, form]) => printable({ route: 'no route', mode: 'junk' as Mode, auth, method, path: inForm(prefix + tail, form), headers: { 'Content-Type': JSON_TYPE, Origin: 'http://fuzz.example' }, ...(method === 'POST' ? { body: '{}' } : {}) }));
  return fc.oneof(...routes.map((route) => routeCase(route)), stray);
}

// ---------------------------------------------------------------------------------------------------------------

export interface Outcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}

export interface Stats {
  requests: number;
  byStatus: Record<string, number>;
  fiveXx: number;
  hangs: number;
  maxMs: number;
  startedAt: number;
  /** route → status → count, for valid master-key requests: shows which routes the fuzz reaches */
  reach: Record<string, Record<string, number>>;
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const GARBAGE_BEARERS = ['Bearer svc_ct_not.a.jwt', 'Bearer svc_', 'Bearer svc_ct_', `Bearer svc_${'a'.repeat(4000)}`, 'Bearer svc_ct_...', 'Bearer svc_ct_%zz.%zz.%zz', `Bearer ${MASTER_KEY}x`, `Bearer ${MASTER_KEY.slice(0, -1)}`];
const ODD_AUTHORIZATIONS = ['Basic Zm9vOmJhcg==', 'Bearer', 'Bearer ', `bearer ${MASTER_KEY}`, `Bearer  ${MASTER_KEY} `, `Bearer ${MASTER_KEY} extra`, 'Token x', `Bearer\t${MASTER_KEY}`, '\u00e9'];

/** Client tokens that must all be refused: alg none, the signature of another payload, claims of another session or expired. */
function forge(token: string, n: number): string {
  const jwt = token.slice('svc_ct_'.length);
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  const variants = [
    `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    `${header}.${b64({ ...claims, sid: PEER })}.${signature}`,
    `${header}.${b64({ ...claims, exp: 4_102_444_800 })}.${signature}`,
    `${header}.${b64({ ...claims, exp: 1 })}.${signature}`,
    `${b64({ alg: 'HS512', typ: 'JWT' })}.${payload}.${signature}`,
    `${header}.${payload}.${signature.slice(0, -2)}AA`,
    `${header}.${Buffer.from(`{"__proto__":{"admin":true},${JSON.stringify(claims).slice(1)}`).toString('base64url')}.${signature}`,
    `${header}.${b64('x'.repeat(3000))}.${signature}`,
  ];
  return `svc_ct_${variants[n % variants.length]}`;
}

export class Fuzzer {
  readonly stats: Stats = { requests: 0, byStatus: {}, fiveXx: 0, hangs: 0, maxMs: 0, startedAt: Date.now(), reach: {} };
  private sinceMaintenance = 0;

  private constructor(
    readonly daemon: TestDaemon,
    readonly pool: Pool,
    readonly fx: Fixtures,
    readonly routes: RouteDef[],
  ) {}

  static async start(): Promise<Fuzzer> {
    const daemon = await startDaemon();
    try {
      const fx = await setupFixtures(daemon);
      return new Fuzzer(daemon, new Pool(daemon.url, { connections: 4, keepAliveTimeout: 10_000 }), fx, routeTable());
    } catch (err) {
      await daemon.cleanup();
      throw err;
    }
  }

  cases(): fc.Arbitrary<FuzzCase> {
    return fuzzCases(this.routes);
  }

  private authHeader(auth: Auth, variant: number): string | undefined {
    switch (auth) {
      case 'master':
        return `Bearer ${MASTER_KEY}`;
      case 'limited':
        return `Bearer ${this.fx.limitedKey}`;
      case 'client':
        return `Bearer ${this.fx.clientToken}`;
      case 'garbage':
        return GARBAGE_BEARERS[variant % GARBAGE_BEARERS.length];
      case 'forged':
        return `Bearer ${forge(this.fx.clientToken, variant)}`;
      case 'odd':
        return ODD_AUTHORIZATIONS[variant % ODD_AUTHORIZATIONS.length];
      default:
        return undefined;
    }
  }

  /** Sends one case; an event stream is closed once its headers arrived. Rejects on a hang or a dropped connection. */
  async send(c: FuzzCase): Promise<Outcome> {
    const headers = { ...c.headers };
    const auth = this.authHeader(c.auth, c.authVariant ?? 0);
    if (auth) headers.Authorization = auth;
    const started = performance.now();
    // what undici refuses to send (CONNECT, a target that is neither a path nor an absolute URL) goes on a raw socket
    if (c.method === 'CONNECT' || !/^(\/|https?:\/\/)/.test(c.path)) return this.sendRaw(c, headers, started);
    const response = await this.pool.request({
      method: c.method as 'GET',
      path: resolveRefs(c.path, this.fx, true, c.pick),
      headers,
      body: c.body === undefined ? undefined : resolveRefs(c.body, this.fx, false, c.pick),
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    let text = '';
    if (String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      response.body.on('error', () => undefined); // the abort we cause
      response.body.destroy();
    }
    else text = await response.body.text();
    const ms = performance.now() - started;
    return { status: response.statusCode, headers: response.headers, text, ms };
  }

  private async sendRaw(c: FuzzCase, headers: Record<string, string>, started: number): Promise<Outcome> {
    // a CONNECT carries no body; with one, the server's close after its answer could reset the connection before the
    // client read that answer (the unread body still in the server's buffer)
    const body = c.body === undefined || c.method === 'CONNECT' ? '' : resolveRefs(c.body, this.fx, false, c.pick);
    const lines = [`${c.method} ${resolveRefs(c.path, this.fx, true, c.pick)} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    const exchange = rawExchange(this.daemon.url, lines.join('\r\n') + '\r\n\r\n', body, { answerHasNoBody: c.method === 'HEAD' });
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        exchange.answer,
        new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new undiciErrors.HeadersTimeoutError()), REQUEST_TIMEOUT_MS))),
      ]);
      const answerHeaders: Record<string, string> = {};
      for (const line of answer.head.split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) answerHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { status: answer.status, headers: answerHeaders, text: answer.body, ms: performance.now() - started };
    } finally {
      clearTimeout(timer);
      exchange.socket.destroy();
    }
  }

  /** The property every request must hold; throws a readable reason otherwise. */
  async check(c: FuzzCase): Promise<void> {
    await this.exchange(c);
  }

  /** Sends one case as `check` does (fixtures kept, answer recorded and checked against the contract) and returns the answer. */
  async exchange(c: FuzzCase): Promise<Outcome> {
    if (++this.sinceMaintenance >= 150) {
      this.sinceMaintenance = 0;
      await maintain(this.daemon, this.fx);
    }
    let outcome: Outcome;
    try {
      outcome = await this.send(c);
    } catch (err) {
      const timedOut = err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError;
      if (timedOut) this.stats.hangs++;
      throw new Error(`${timedOut ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : `request failed: ${(err as Error).message}`}`);
    }
    // a fuzzed S3 configuration would aim the next persist at a fuzzed endpoint (a 502 S3_ERROR by contract): put the
    // settings back at once
    if (c.route === 'PUT /api/admin/settings') await restoreSettings(this.daemon, this.fx);
    this.record(outcome);
    learn(this.fx, outcome);
    if (c.mode === 'valid' && c.auth === 'master') {
      const row = (this.stats.reach[c.route] ??= {});
      row[outcome.status] = (row[outcome.status] ?? 0) + 1;
    }
    const problem = problemOf(c, outcome);
    if (problem) throw new Error(`${problem}\n  answer: ${outcome.status} ${short(outcome.text, 600)}`);
    return outcome;
  }

  private record(o: Outcome): void {
    this.stats.requests++;
    this.stats.byStatus[o.status] = (this.stats.byStatus[o.status] ?? 0) + 1;
    if (o.status >= 500) this.stats.fiveXx++;
    this.stats.maxMs = Math.max(this.stats.maxMs, o.ms);
  }

  /** The daemon is healthy, a valid send works, nothing observable changed its prototype, and nothing was logged as failed. */
  async finalChecks(): Promise<string[]> {
    await maintain(this.daemon, this.fx);
    return finalProblems(this.daemon, this.fx);
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
    await this.daemon.cleanup();
  }
}

/** Why an answer breaks the contract, or undefined when it keeps it. */
export function problemOf(c: FuzzCase, o: Outcome): string | undefined {
  if (o.status >= 500) return `5xx answer ${o.status}`;
  if (!o.headers['x-request-id']) return 'no X-Request-Id header';
  if (!c.path.startsWith('/') && o.status !== 400) return `a request target that is not a path answered ${o.status}, not 400`;
  if (o.status === 405 && !o.headers.allow) return '405 without Allow';
  if (c.method === 'HEAD') return undefined;
  if (o.status < 400) return driftOf(c, o);
  let body: unknown;
  try {
    body = JSON.parse(o.text);
  } catch {
    return 'an error answer that is not JSON';
  }
  const envelope = body as { error?: { code?: unknown; message?: unknown; details?: unknown } };
  if (!envelope || typeof envelope !== 'object' || Object.keys(envelope).join() !== 'error' || !envelope.error || typeof envelope.error !== 'object') {
    return 'an error answer not shaped {error:{code,message,details?}}';
  }
  const { code, message, details } = envelope.error;
  const extra = Object.keys(envelope.error).filter((k) => !['code', 'message', 'details'].includes(k));
  if (extra.length) return `error carries unknown fields ${extra.join(', ')}`;
  if (typeof code !== 'string' || !(code in errorStatus)) return `error code ${String(code)} is not in the error table`;
  if (errorStatus[code as keyof typeof errorStatus] !== o.status) return `error code ${code} maps to ${errorStatus[code as keyof typeof errorStatus]}, answered ${o.status}`;
  if (typeof message !== 'string' || !message) return 'error without a message';
  if (details !== undefined) {
    if (!Array.isArray(details)) return 'error details is not an array';
    for (const d of details as { path?: unknown; message?: unknown }[]) {
      if (!d || typeof d.path !== 'string' || typeof d.message !== 'string') return 'an error detail is not {path, message}';
    }
  }
  if (o.status === 429 && !o.headers['retry-after']) return '429 without Retry-After';
  return driftOf(c, o);
}

/** Whether the answer fits the OpenAPI document for its route and status (the same check every integration test makes). */
function driftOf(c: FuzzCase, o: Outcome): string | undefined {
  const headers = new Headers();
  for (const [name, value] of Object.entries(o.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  const json = /^application\/json\b/.test(headers.get('content-type') ?? '');
  try {
    checkResponse(c.method, c.path, o.status, headers, json && o.text ? JSON.parse(o.text) : undefined, o.text);
    return undefined;
  } catch (err) {
    if (err instanceof ContractDrift) return err.message;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Fixtures: sessions paired through the sandbox, a limited key, a client token, a webhook, a message, a group, a label.

async function must(daemon: TestDaemon, method: string, path: string, body?: unknown, expect: number[] = [200, 201]): Promise<any> {
  const response = await daemon.request(method, path, body);
  if (!expect.includes(response.status)) throw new Error(`fixture ${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body?.data;
}

async function setupFixtures(daemon: TestDaemon): Promise<Fixtures> {
  await pairedSession(daemon, MAIN, MAIN_PHONE, { business: true });
  await pairedSession(daemon, PEER, PEER_PHONE);
  const limited = await must(daemon, 'POST', '/api/admin/keys', { name: 'fuzz-limited', scopes: ['messages:send', 'sessions:read', 'contacts:read'], sessions: [MAIN] });
  const sent = await must(daemon, 'POST', '/api/messages/send', { session: MAIN, chatId: PEER_PHONE, type: 'text', text: 'fixture' });
  const settings = (await must(daemon, 'GET', '/api/admin/settings')) as Record<string, unknown>;
  const fx: Fixtures = {
    limitedKey: limited.key,
    clientToken: '',
    clientTokenAt: 0,
    refs: { message: sent.messageId } as Fixtures['refs'],
    learned: {},
    settings,
    sessionShape: [],
  };
  await maintain(daemon, fx);
  fx.sessionShape = Object.keys((await must(daemon, 'GET', `/api/sessions/${MAIN}`)) as object).sort();
  return fx;
}

const found = async (daemon: TestDaemon, path: string): Promise<boolean> => (await daemon.request('GET', path)).status === 200;

/** Puts the fixtures back the way the fuzz needs them and drops what it created, so a long run stays bounded. */
async function restoreSettings(daemon: TestDaemon, fx: Fixtures): Promise<void> {
  await must(daemon, 'PUT', '/api/admin/settings', { autoPersist: fx.settings.autoPersist ?? false, s3: null });
}

export async function maintain(daemon: TestDaemon, fx: Fixtures): Promise<void> {
  await restoreSettings(daemon, fx);
  const sessions = (await must(daemon, 'GET', '/api/sessions?limit=1000')) as { name: string; status: string }[];
  for (const s of sessions) {
    if (![MAIN, PEER, ...DISPOSABLE].includes(s.name)) await must(daemon, 'DELETE', `/api/sessions/${encodeURIComponent(s.name)}`, undefined, [200, 404]);
  }
  for (const [name, phone] of [[MAIN, MAIN_PHONE], [PEER, PEER_PHONE]] as const) {
    const s = sessions.find((x) => x.name === name);
    if (s?.status === 'CONNECTED') continue;
    if (!s) {
      // a fuzzed request is never aimed at these; if one got through anyway, recreate rather than stop the run
      await must(daemon, 'POST', '/api/sessions', { name, engine: 'sandbox' });
      if (name === MAIN) fx.clientTokenAt = 0;
    }
    await must(daemon, 'POST', `/api/sessions/${name}/start`, {}, [200, 201, 409]);
    await must(daemon, 'POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber: phone, ...(name === MAIN ? { business: true } : {}) }, [200, 409]);
    await waitFor(async () => (await daemon.request('GET', `/api/sessions/${name}`)).body?.data?.status === 'CONNECTED', 5000, `${name} CONNECTED`);
  }
  for (const [i, name] of DISPOSABLE.entries()) {
    if (!sessions.some((s) => s.name === name)) {
      await must(daemon, 'POST', '/api/sessions', { name, start: true, engine: 'sandbox' });
      if (i === 0) await must(daemon, 'POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber: `+1555000010${i}` }, [200, 409]);
    }
  }
  const r = fx.refs;
  const base = `/api/sessions/${MAIN}`;
  if (!r.webhook || !(await found(daemon, `/api/webhooks/${r.webhook}`))) {
    r.webhook = String((await must(daemon, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['session.status', 'message.sent'] })).id);
  }
  const webhooks = (await must(daemon, 'GET', '/api/webhooks?limit=1000')) as { id: number }[];
  for (const w of webhooks) if (String(w.id) !== r.webhook) await must(daemon, 'DELETE', `/api/webhooks/${w.id}`, undefined, [200, 404]);
  const deliveries = (await must(daemon, 'GET', `/api/webhooks/${r.webhook}/deliveries?limit=1`)) as { id: string }[];
  if (deliveries[0]) r.delivery = deliveries[0].id;
  if (!r.group || !(await found(daemon, `${base}/groups/${encodeURIComponent(r.group)}`))) {
    r.group = (await must(daemon, 'POST', `${base}/groups`, { session: MAIN, name: 'fuzz group', participants: [PEER_PHONE] })).id;
  }
  if (!r.channel || !(await found(daemon, `${base}/channels/${encodeURIComponent(r.channel)}`))) {
    r.channel = (await must(daemon, 'POST', `${base}/channels`, { session: MAIN, name: 'fuzz channel' })).channelId;
  }
  const labels = (await must(daemon, 'GET', `${base}/labels`)) as { id: string }[];
  if (!labels.some((l) => l.id === r.label)) r.label = (await must(daemon, 'POST', `${base}/labels`, { name: 'fuzz', color: 1 })).id;
  if (!r.media || !(await found(daemon, `${base}/media/${r.media}`))) {
    const image = await must(daemon, 'POST', '/api/messages/send', { session: MAIN, chatId: PEER_PHONE, type: 'image', base64: PNG, mimeType: 'image/png' });
    r.media = image.mediaId;
  }
  const keys = (await must(daemon, 'GET', '/api/admin/keys')) as { id: string; name: string }[];
  for (const k of keys) if (!k.name.startsWith('fuzz-')) await must(daemon, 'DELETE', `/api/admin/keys/${k.id}`, undefined, [200, 404]);
  for (const name of ['key1', 'key2'] as const) {
    if (!keys.some((k) => k.id === r[name])) r[name] = (await must(daemon, 'POST', '/api/admin/keys', { name: `fuzz-${name}`, scopes: ['sessions:read'] })).id;
  }
  if (Date.now() - fx.clientTokenAt > 5 * 60_000) {
    await must(daemon, 'PUT', `/api/sessions/${MAIN}/client-rules`, { recipientMode: 'any', enabled: true, allowedActions: 'send_message,send_reaction,send_typing,send_seen,read_presence,subscribe_presence,read_contact', allowedOrigins: 'https://app.example' });
    fx.clientToken = (await must(daemon, 'POST', '/api/client-tokens', { session: MAIN, ephemeralId: 'fuzz', ttlSeconds: 900 })).token;
    fx.clientTokenAt = Date.now();
  }
}

async function finalProblems(daemon: TestDaemon, fx: Fixtures): Promise<string[]> {
  const problems: string[] = [];
  const health = await daemon.request('GET', '/api/health', undefined, null);
  if (health.status !== 200 || health.body?.data?.status !== 'ok') problems.push(`health: ${health.status} ${JSON.stringify(health.body)}`);
  const sent = await daemon.request('POST', '/api/messages/send', { session: MAIN, chatId: PEER_PHONE, type: 'text', text: 'still working' });
  if (sent.status !== 200 && sent.status !== 201) problems.push(`valid send: ${sent.status} ${JSON.stringify(sent.body)}`);
  // prototype pollution, seen from outside: defaults and refusals that a polluted Object.prototype would change
  const canary = await daemon.request('POST', '/api/sessions', { name: 'fz-canary' });
  if (canary.body?.data?.engine !== 'sandbox') problems.push(`a session created without an engine got ${JSON.stringify(canary.body)}`);
  await daemon.request('DELETE', '/api/sessions/fz-canary');
  const shape = Object.keys((await daemon.request('GET', `/api/sessions/${MAIN}`)).body?.data ?? {}).sort();
  if (shape.join() !== fx.sessionShape.join()) problems.push(`a session's fields changed: ${shape.join()} (was ${fx.sessionShape.join()})`);
  const escalate = await daemon.request('GET', '/api/admin/keys', undefined, fx.limitedKey);
  if (escalate.status !== 403) problems.push(`the limited key reached an admin route: ${escalate.status}`);
  const other = await daemon.request('GET', `/api/sessions/${PEER}`, undefined, fx.limitedKey);
  if (other.status !== 403) problems.push(`the limited key reached another session: ${other.status}`);
  const anonymous = await daemon.request('GET', '/api/sessions', undefined, null);
  if (anonymous.status !== 401) problems.push(`no key listed sessions: ${anonymous.status}`);
  const failed = daemon.output().split('\n').filter((line) => line.includes('request failed'));
  if (failed.length) problems.push(`the daemon logged ${failed.length} "request failed" line(s), first: ${short(failed[0]!, 2000)}`);
  return problems;
}

/**
 * Runs the property; resolves to undefined when it held, else to a report with the seed, the path, the route and the
 * shrunk request, and the reason, so `npm run fuzz -- --seed S --path P` replays it.
 */
export async function runFuzz(fuzzer: Fuzzer, params: { numRuns: number; seed: number; path?: string }): Promise<string | undefined> {
  const details = await fc.check(
    fc.asyncProperty(fuzzer.cases(), (c) => fuzzer.check(c)),
    params,
  );
  if (!details.failed) return undefined;
  const [c] = details.counterexample ?? [];
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return [
    `fuzz property failed after ${details.numRuns} run(s), shrunk ${details.numShrinks} time(s)`,
    `  seed ${details.seed}, path ${details.counterexamplePath}: replay with npm run fuzz -- --runs ${params.numRuns} --seed ${details.seed} --path ${details.counterexamplePath}`,
    `  route ${c?.route ?? '?'}`,
    `  request ${c ? fc.stringify(c) : '?'}`,
    `  reason ${reason}`,
  ].join('\n');
}

/** fast-check parameters from `--runs N --seed S [--path P]`. */
export function parseArgs(argv: string[], defaults: { runs: number; seed: number }): { numRuns: number; seed: number; path?: string } {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  };
  const runs = Number(value('runs') ?? defaults.runs);
  const seed = Number(value('seed') ?? defaults.seed);
  if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) throw new Error('usage: npm run fuzz -- [--runs N] [--seed S] [--path P]');
  return { numRuns: runs, seed, path: value('path') };
}

export { fc };
