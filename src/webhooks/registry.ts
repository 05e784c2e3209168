// Webhook registrations: validated CRUD, the delivery log, manual retry, and an in-memory cache of enabled webhooks for matching.
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { EVENT_TYPES, isEventType } from '../events/catalogue.js';
import { GatewayError, ValidationError, notFound } from '../errors.js';
import type { DeliveryRow, DeliveryStatus, OutboxRepo } from '../store/outbox.js';
import type { SignatureScheme, WebhookFields, WebhookHeader, WebhookRow, WebhooksRepo } from '../store/webhooks.js';
import { DEFAULT_RETRIES, MAX_ATTEMPTS, MAX_DELAY_SECONDS, RETRY_POLICY_NAMES, type RetrySettings } from './retry-policy.js';
import { checkTargetUrl, type UrlPolicy } from '../net/url-guard.js';
import { deliveryTarget, type DeliveryTarget } from './http-delivery.js';
import type { Principal } from '../auth/scopes.js';
import { principalId, quotaRefusal } from '../quota.js';

export const MAX_HEADERS = 10;
export const MIN_HMAC_KEY_LENGTH = 16;
/** webhooks only the master key may register, whatever the API keys hold */
export const WEBHOOK_MASTER_RESERVE = 10;
/** RFC 9110 token characters */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Header names a webhook may not set: ours, the ones that would break the request (hop-by-hop and framing headers make
 * every delivery fail), and proxy credentials, which belong to no receiver.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
]);
/** RFC 9110 field-value characters: visible ASCII, space, tab, and obs-text; no control characters */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
export const RESERVED_PREFIX = 'x-webhook-';
export const DISABLED_ERROR = 'webhook disabled';
/**
 * Custom header values (often the receiver's own tokens) never leave the daemon: responses carry this instead, and a
 * PUT that sends it back as a value keeps the stored value of that header.
 */
export const HEADER_VALUE_MASK = '********';

/** The public shape of a webhook (SPEC §2 "Webhook"); hmacKey only in the creation response. */
export interface WebhookView {
  id: number;
  url: string;
  events: string[];
  session: string | null;
  enabled: boolean;
  /** names as given, values always HEADER_VALUE_MASK */
  headers: WebhookHeader[];
  retries: RetrySettings;
  signatureScheme: SignatureScheme;
  createdAt: string;
  updatedAt: string;
  hmacKey?: string;
}

/** A delivery in the log, as the API shows it. */
export interface DeliveryView {
  id: string;
  eventId: string;
  event: string;
  session: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookInput {
  url?: string;
  events?: string[];
  session?: string | null;
  enabled?: boolean;
  headers?: WebhookHeader[];
  retries?: Partial<RetrySettings>;
  hmacKey?: string;
  signatureScheme?: SignatureScheme;
}

/** An enabled webhook as the outbox and dispatcher use it; replaced (never mutated) on every change. */
export interface ActiveWebhook extends WebhookRow {
  /** null = every event type */
  eventSet: ReadonlySet<string> | null;
  /** the custom headers as a plain object, ready for a request */
  headerObject: Readonly<Record<string, string>>;
  /** the URL, parsed for the HTTP client */
  target: DeliveryTarget;
}

export type WebhookChange =
  | { type: 'created' | 'updated' | 'deleted'; webhookId: number }
  | { type: 'requeued'; webhookId: number; deliveryId: string };

export function webhookView(row: WebhookRow, withKey = false): WebhookView {
  const view: WebhookView = {
    id: row.id,
    url: row.url,
    events: row.events,
    session: row.session,
    enabled: row.enabled,
    headers: row.headers.map(({ name }) => ({ name, value: HEADER_VALUE_MASK })),
    retries: row.retries,
    signatureScheme: row.signatureScheme,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  if (withKey) view.hmacKey = row.hmacKey;
  return view;
}

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    eventId: row.eventId,
    event: row.event,
    session: row.session,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt === null ? null : new Date(row.nextAttemptAt).toISOString(),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

export interface RegistryDeps {
  webhooks: WebhooksRepo;
  outbox: OutboxRepo;
  urlPolicy: UrlPolicy;
  /** webhooks that may exist at once (unlimited when absent) */
  maxWebhooks?: number;
  /** webhooks one API key may register (unlimited when absent) */
  maxWebhooksPerKey?: number;
}

export class WebhookRegistry {
  private active = new Map<number, ActiveWebhook>();
  private activeList: ActiveWebhook[] = [];
  private readonly listeners = new Set<(change: WebhookChange) => void>();
  /** refreshes started and the latest one applied: an older read that answers late does not replace a newer one */
  private refreshesStarted = 0;
  private refreshApplied = 0;

  /** Makes the registry with its cache of enabled webhooks filled. */
  static async open(deps: RegistryDeps): Promise<WebhookRegistry> {
    const registry = new WebhookRegistry(deps);
    await registry.reload();
    return registry;
  }

  /** Use `open`, or call `reload` before use: the cache of enabled webhooks starts empty (nothing matches until then). */
  constructor(
    private readonly deps: RegistryDeps,
  ) {}

  /** Called after every change (the dispatcher listens); listeners run synchronously, after the cache is refreshed. */
  onChange(listener: (change: WebhookChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** `caller`: who registers it, counted against its quota (none: the operator, bound by the global cap only) */
  async create(input: WebhookInput & { url: string }, caller: Principal = { kind: 'master' }): Promise<WebhookView> {
    const owner = principalId(caller);
    const max = this.deps.maxWebhooks;
    if (max !== undefined) {
      const limits = { max, perPrincipal: this.deps.maxWebhooksPerKey ?? Infinity, masterReserve: WEBHOOK_MASTER_RESERVE };
      const [total, master, own] = await Promise.all([this.deps.webhooks.count(), this.deps.webhooks.countOwnedBy('master'), this.deps.webhooks.countOwnedBy(owner)]);
      const use = { total, others: total - master, own };
      const refusal = quotaRefusal(limits, caller, use, 'webhooks');
      if (refusal) throw new GatewayError('LIMIT_REACHED', `${refusal} (webhooks.maxWebhooks ${max}, webhooks.maxWebhooksPerKey ${limits.perPrincipal}); delete one first`);
    }
    const fields: WebhookFields = {
      url: this.checkUrl(input.url),
      events: normaliseEvents(input.events),
      session: input.session ?? null,
      enabled: input.enabled ?? true,
      headers: checkHeaders(input.headers ?? []),
      retries: checkRetries({ ...DEFAULT_RETRIES, ...input.retries }),
      hmacKey: input.hmacKey ?? randomBytes(32).toString('hex'),
      signatureScheme: input.signatureScheme ?? 'body',
    };
    checkHmacKey(fields.hmacKey);
    const row = await this.deps.webhooks.insert(fields, owner);
    await this.changed({ type: 'created', webhookId: row.id });
    return webhookView(row, true);
  }

  async list(limit = 1000, offset = 0, sessions: readonly string[] | null = null): Promise<{ rows: WebhookView[]; total: number }> {
    if (sessions) {
      // a session-limited key sees only the webhooks of its sessions
      const all = (await this.deps.webhooks.list(Number.MAX_SAFE_INTEGER, 0)).filter((w) => w.session !== null && sessions.includes(w.session));
      return { rows: all.slice(offset, offset + limit).map((w) => webhookView(w)), total: all.length };
    }
    const [rows, total] = await Promise.all([this.deps.webhooks.list(limit, offset), this.deps.webhooks.count()]);
    return { rows: rows.map((w) => webhookView(w)), total };
  }

  /** The stored webhook (with its key), or WEBHOOK_NOT_FOUND. */
  async getRow(id: number): Promise<WebhookRow> {
    const row = await this.deps.webhooks.get(id);
    if (!row) throw notFound('WEBHOOK_NOT_FOUND', `webhook ${id}`);
    return row;
  }

  async get(id: number): Promise<WebhookView> {
    return webhookView(await this.getRow(id));
  }

  /**
   * Partial update: only supplied fields change; `headers` replaces the list (a value given as HEADER_VALUE_MASK keeps
   * the stored value of that header); a new hmacKey or signatureScheme signs the next attempt.
   */
  async update(id: number, patch: WebhookInput): Promise<WebhookView> {
    const current = await this.getRow(id);
    const url = patch.url === undefined ? current.url : this.checkUrl(patch.url);
    // stored header values (often the receiver's own tokens) never follow the webhook to another origin unseen: whoever
    // moves it must know them, or the hidden values would be one PUT away from any webhooks:manage key
    const keepable = new URL(url).origin === new URL(current.url).origin ? current.headers : [];
    if (patch.headers === undefined && keepable.length < current.headers.length) {
      throw ValidationError.field('/headers', 'the URL moves to another origin: send the headers again with their values (stored values never follow a webhook to a new origin)');
    }
    const fields: WebhookFields = {
      url,
      events: patch.events === undefined ? current.events : normaliseEvents(patch.events),
      session: patch.session === undefined ? current.session : patch.session,
      enabled: patch.enabled ?? current.enabled,
      headers: patch.headers === undefined ? current.headers : checkHeaders(unmaskHeaders(patch.headers, keepable, keepable !== current.headers)),
      retries: patch.retries === undefined ? current.retries : checkRetries({ ...current.retries, ...patch.retries }),
      hmacKey: patch.hmacKey ?? current.hmacKey,
      signatureScheme: patch.signatureScheme ?? current.signatureScheme,
    };
    if (patch.hmacKey !== undefined) checkHmacKey(patch.hmacKey);
    // a PUT that changes nothing (`{}`, or the values already stored) writes nothing: updatedAt stays put
    if (sameFields(fields, current)) return webhookView(current);
    // a webhook being disabled takes no more events from now on (its pending deliveries are failed with the update)
    if (!fields.enabled) this.withdraw(id);
    let row: WebhookRow | undefined;
    try {
      row = await this.deps.webhooks.update(id, fields, DISABLED_ERROR);
    } finally {
      if (!row) await this.refresh();
    }
    if (!row) throw notFound('WEBHOOK_NOT_FOUND', `webhook ${id}`);
    await this.changed({ type: 'updated', webhookId: id });
    return webhookView(row);
  }

  async delete(id: number): Promise<void> {
    // no event is recorded for it while it is being deleted (its delivery rows would refer to a webhook gone)
    this.withdraw(id);
    let deleted = false;
    try {
      deleted = await this.deps.webhooks.delete(id);
    } finally {
      if (!deleted) await this.refresh();
    }
    if (!deleted) throw notFound('WEBHOOK_NOT_FOUND', `webhook ${id}`);
    await this.changed({ type: 'deleted', webhookId: id });
  }

  /** A deleted session's webhooks go with it, so they never attach to a later session of the same name. */
  async deleteForSession(session: string): Promise<void> {
    for (const id of await this.deps.webhooks.idsOfSession(session)) await this.delete(id);
  }

  async deliveries(id: number, status: DeliveryStatus | undefined, limit = 1000, offset = 0): Promise<{ rows: DeliveryView[]; total: number }> {
    await this.getRow(id);
    const { rows, total } = await this.deps.outbox.list(id, status, limit, offset);
    return { rows: rows.map(deliveryView), total };
  }

  /** One delivery of the log, with the body it POSTs. */
  async delivery(id: number, deliveryId: string): Promise<DeliveryView & { body: string }> {
    await this.getRow(id);
    const [row, body] = await Promise.all([this.deps.outbox.get(id, deliveryId), this.deps.outbox.bodyOf(id, deliveryId)]);
    if (!row || body === undefined) throw notFound('DELIVERY_NOT_FOUND', `delivery ${deliveryId} of webhook ${id}`);
    return { ...deliveryView(row), body };
  }

  /** Re-queues a delivery now with a fresh retry budget (while the webhook is disabled it waits until enabled). */
  async retryDelivery(id: number, deliveryId: string): Promise<DeliveryView> {
    await this.getRow(id);
    const row = await this.deps.outbox.requeue(id, deliveryId);
    if (!row) throw notFound('DELIVERY_NOT_FOUND', `delivery ${deliveryId} of webhook ${id}`);
    this.emit({ type: 'requeued', webhookId: id, deliveryId });
    return deliveryView(row);
  }

  /** The current settings of an enabled webhook, or undefined when it is disabled or gone. */
  activeWebhook(id: number): ActiveWebhook | undefined {
    return this.active.get(id);
  }

  /** Enabled webhooks whose filters accept this event. */
  matching(event: string, session: string): ActiveWebhook[] {
    const out: ActiveWebhook[] = [];
    for (const w of this.activeList) {
      if (w.session !== null && w.session !== session) continue;
      if (w.eventSet !== null && !w.eventSet.has(event)) continue;
      out.push(w);
    }
    return out;
  }

  private checkUrl(raw: string): string {
    return checkTargetUrl(raw, this.deps.urlPolicy, 'WEBHOOK_URL_REJECTED').href;
  }

  /** Reads the enabled webhooks again: another daemon sharing the store changed them. */
  reload(): Promise<void> {
    return this.refresh();
  }

  private async changed(change: WebhookChange): Promise<void> {
    await this.refresh();
    this.emit(change);
  }

  /** Takes a webhook out of the cache at once (matching and the dispatcher stop using it); a refresh puts back what the store holds. */
  private withdraw(id: number): void {
    if (!this.active.delete(id)) return;
    this.activeList = [...this.active.values()];
  }

  private emit(change: WebhookChange): void {
    for (const listener of this.listeners) listener(change);
  }

  private async refresh(): Promise<void> {
    const started = ++this.refreshesStarted;
    const rows = await this.deps.webhooks.listEnabled();
    if (started < this.refreshApplied) return;
    this.refreshApplied = started;
    const active = new Map<number, ActiveWebhook>();
    for (const row of rows) {
      active.set(row.id, {
        ...row,
        eventSet: row.events.length ? new Set(row.events) : null,
        headerObject: Object.fromEntries(row.headers.map((h) => [h.name, h.value])),
        target: deliveryTarget(row.url),
      });
    }
    this.active = active;
    this.activeList = [...active.values()];
  }
}

/** `[]`, omitted or containing "*" = all events (stored as []); otherwise catalogue names, de-duplicated. */
export function normaliseEvents(events: string[] | undefined): string[] {
  if (!events || events.length === 0 || events.includes('*')) return [];
  events.forEach((e, i) => {
    if (!isEventType(e)) throw ValidationError.field(`/events/${i}`, `unknown event type "${e}"; one of: ${EVENT_TYPES.join(', ')}, or "*"`);
  });
  return [...new Set(events)];
}

/** Whether the new settings equal the stored ones, field by field (the row's id and times aside). */
function sameFields(fields: WebhookFields, current: WebhookRow): boolean {
  return (Object.keys(fields) as (keyof WebhookFields)[]).every((key) => isDeepStrictEqual(fields[key], current[key]));
}

/** Puts the stored value back for every header sent with the masked value; a mask for a header not stored is refused. */
function unmaskHeaders(headers: WebhookHeader[], stored: readonly WebhookHeader[], movesOrigin: boolean): WebhookHeader[] {
  return headers.map(({ name, value }, i) => {
    if (value !== HEADER_VALUE_MASK) return { name, value };
    if (movesOrigin) throw ValidationError.field(`/headers/${i}/value`, `the URL moves to another origin: give the value of "${name}" again (stored values never follow a webhook to a new origin)`);
    const kept = stored.find((h) => h.name.toLowerCase() === name.toLowerCase());
    if (!kept) throw ValidationError.field(`/headers/${i}/value`, `"${HEADER_VALUE_MASK}" keeps a stored value, but this webhook has no header "${name}"`);
    return { name, value: kept.value };
  });
}

export function checkHeaders(headers: WebhookHeader[]): WebhookHeader[] {
  if (headers.length > MAX_HEADERS) throw ValidationError.field('/headers', `at most ${MAX_HEADERS} headers are allowed`);
  const seen = new Set<string>();
  return headers.map(({ name, value }, i) => {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) {
      throw ValidationError.field(`/headers/${i}/name`, `"${name}" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    }
    if (RESERVED_HEADERS.has(lower) || lower.startsWith(RESERVED_PREFIX)) {
      throw ValidationError.field(`/headers/${i}/name`, `"${name}" is set by the gateway and cannot be overridden`);
    }
    if (seen.has(lower)) throw ValidationError.field(`/headers/${i}/name`, `"${name}" is given twice`);
    seen.add(lower);
    if (!HEADER_VALUE.test(value)) throw ValidationError.field(`/headers/${i}/value`, 'must not contain control characters (CR, LF, NUL, …)');
    return { name, value };
  });
}

function checkRetries(retries: RetrySettings): RetrySettings {
  const { attempts, delaySeconds, policy } = retries;
  if (!Number.isInteger(attempts) || attempts < 0 || attempts > MAX_ATTEMPTS) {
    throw ValidationError.field('/retries/attempts', `must be an integer from 0 to ${MAX_ATTEMPTS}`);
  }
  if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
    throw ValidationError.field('/retries/delaySeconds', `must be an integer from 0 to ${MAX_DELAY_SECONDS}`);
  }
  if (!RETRY_POLICY_NAMES.includes(policy)) throw ValidationError.field('/retries/policy', `must be one of: ${RETRY_POLICY_NAMES.join(', ')}`);
  return { attempts, delaySeconds, policy };
}

function checkHmacKey(key: string): void {
  if (key.length < MIN_HMAC_KEY_LENGTH) throw ValidationError.field('/hmacKey', `must be at least ${MIN_HMAC_KEY_LENGTH} characters`);
}
