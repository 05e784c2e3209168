// Prometheus metrics (prom-client): process defaults (event-loop lag included) plus the gateway's own gauges, counters
// and histograms. What every request or delivery pays for is a preallocated histogram series: no label hashing.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { ENGINE_NAMES, type EngineName, type SessionStatus } from './engine/types.js';
import type { GatewayEvent } from './events/catalogue.js';
import { FAILURE_REASONS, type FailureReason } from './engine/server-acks.js';
import { DECRYPTION_FAILURE_KINDS, type DecryptionSignal } from './engine/decryption.js';
import type { HealthReport } from './sessions/watchdog.js';

/** the label of requests answered before a route matched (unknown paths, refusals while draining or over capacity) */
export const UNMATCHED_ROUTE = { method: '*', path: 'unmatched' } as const;

const SESSION_STATES: readonly SessionStatus[] = ['CONNECTING', 'CONNECTED', 'DISCONNECTED'];
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const ATTEMPT_BUCKETS = [1, 2, 3, 4, 5, 7, 10, 15, 21];
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

type MaybePromise<T> = T | Promise<T>;

/** What the gauges read when scraped (prom-client waits for a gauge's collect when it returns a promise). */
export interface MetricSources {
  sessionCounts(): MaybePromise<{ total: number; connected: number }>;
  /** sessions grouped by engine, status and status reason */
  sessionStates(): MaybePromise<Array<{ engine: EngineName; status: SessionStatus; statusReason: string | null; count: number }>>;
  /** pending webhook deliveries, and when the oldest of them was written (ms since the epoch; null when none) */
  webhookBacklog(): MaybePromise<{ pending: number; oldestCreatedAt: number | null }>;
  /** sessions of this daemon its health watchdog found deaf and has not seen recover */
  degradedSessions(): number;
}

/** The result of one webhook delivery attempt: `pending` means another attempt is scheduled. */
export interface AttemptObservation {
  status: 'succeeded' | 'failed' | 'pending';
  /** attempts the delivery has had, this one included */
  attempts: number;
  durationMs: number;
}

export interface Metrics {
  registry: Registry;
  contentType: string;
  httpRequests: Counter<'method' | 'status'>;
  /** request duration by route pattern: take a series once per route, observe on every request */
  httpLatency: SeriesHistogram;
  events: Counter<'event'>;
  webhookAttempts: Counter<'outcome'>;
  observeEvent(event: GatewayEvent): void;
  observeAttempt(attempt: AttemptObservation): void;
  observeReconnect(engine: EngineName, reason: string): void;
  /** a decryption fact of a session (retry receipt, failure, exhausted retries) */
  observeDecryption(session: string, signal: DecryptionSignal): void;
  /** drops a deleted session's decryption series */
  forgetSession(session: string): void;
  /** a step of a session's health watchdog (degraded) or a recovery */
  observeHealth(report: Pick<HealthReport, 'state' | 'step' | 'reason'>): void;
  /** one commit of the tick transaction, seconds */
  observeCommit(seconds: number): void;
  render(): Promise<string>;
}

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  // both backlog gauges of one scrape share one read
  let backlogRead: ReturnType<MetricSources['webhookBacklog']> | undefined;
  const backlog = () => {
    if (!backlogRead) {
      backlogRead = sources.webhookBacklog();
      setImmediate(() => (backlogRead = undefined));
    }
    return backlogRead;
  };
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  new Gauge({
    name: 'gateway_sessions',
    help: 'sessions by state',
    labelNames: ['state'],
    registers,
    async collect() {
      const { total, connected } = await sources.sessionCounts();
      this.set({ state: 'total' }, total);
      this.set({ state: 'connected' }, connected);
    },
  });
  new Gauge({
    name: 'gateway_sessions_by_state',
    help: 'sessions by engine, state and status reason (reason "none" when there is none)',
    labelNames: ['engine', 'state', 'reason'],
    registers,
    async collect() {
      const rows = await sources.sessionStates();
      this.reset();
      for (const engine of ENGINE_NAMES) for (const state of SESSION_STATES) this.set({ engine, state, reason: 'none' }, 0);
      for (const row of rows) this.set({ engine: row.engine, state: row.status, reason: row.statusReason ?? 'none' }, row.count);
    },
  });
  const reconnects = new Counter({
    name: 'gateway_session_reconnects_total',
    help: 'reconnects scheduled after a dropped connection, by engine and the reason it dropped',
    labelNames: ['engine', 'reason'],
    registers,
  });
  const healthTransitions = new Counter({
    name: 'gateway_session_health_transitions_total',
    help: "the health watchdog's steps (state degraded: the step taken) and recoveries (state recovered: the step that brought frames back), by the reason the step was taken",
    labelNames: ['state', 'step', 'reason'],
    registers,
  });
  new Gauge({
    name: 'gateway_sessions_degraded',
    help: 'sessions of this daemon its health watchdog found deaf (no frame for sessions.health.silenceSeconds) and has not seen recover',
    registers,
    collect() {
      this.set(sources.degradedSessions());
    },
  });
  const httpRequests = new Counter({ name: 'gateway_http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'status'], registers });
  const httpLatency = new SeriesHistogram({
    name: 'gateway_http_request_duration_seconds',
    help: `time to answer an HTTP request, by method and route pattern (route "${UNMATCHED_ROUTE.path}": answered before a route matched)`,
    labelNames: ['method', 'route'],
    buckets: HTTP_BUCKETS,
    emitEmpty: false,
    registers,
  });
  const events = new Counter({ name: 'gateway_events_total', help: 'events recorded', labelNames: ['event'], registers });
  const messages = new Counter({
    name: 'gateway_messages_total',
    help: 'messages by direction: in (received from others), out (sent by the sessions, through the API or from the phone)',
    labelNames: ['direction'],
    registers,
  });
  messages.inc({ direction: 'in' }, 0);
  messages.inc({ direction: 'out' }, 0);
  const failed = new Counter({
    name: 'gateway_messages_failed_total',
    help: 'sent messages that failed, by reason (rate_limited, reachout_timelocked, timeout, …: docs/API.md "Message status")',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of FAILURE_REASONS) failed.inc({ reason }, 0);
  const webhookAttempts = new Counter({
    name: 'gateway_webhook_attempts_total',
    help: 'webhook delivery attempts by outcome: succeeded, failed (retries exhausted), retry (another attempt scheduled)',
    labelNames: ['outcome'],
    registers,
  });
  const attemptDuration = new SeriesHistogram({
    name: 'gateway_webhook_attempt_duration_seconds',
    help: 'time of one webhook delivery attempt (POST to answer), by outcome: succeeded, failed, retry',
    labelNames: ['outcome'],
    buckets: DELIVERY_BUCKETS,
    emitEmpty: true,
    registers,
  });
  const attemptSeries = { succeeded: attemptDuration.series('succeeded'), failed: attemptDuration.series('failed'), pending: attemptDuration.series('retry') };
  const deliveryAttempts = new SeriesHistogram({
    name: 'gateway_webhook_delivery_attempts',
    help: 'attempts a webhook delivery took until its final outcome: succeeded, failed',
    labelNames: ['outcome'],
    buckets: ATTEMPT_BUCKETS,
    emitEmpty: true,
    registers,
  });
  const finalSeries = { succeeded: deliveryAttempts.series('succeeded'), failed: deliveryAttempts.series('failed') };
  new Gauge({
    name: 'gateway_webhook_backlog',
    help: 'webhook deliveries waiting to be made (pending, retries included)',
    registers,
    async collect() {
      this.set((await backlog()).pending);
    },
  });
  new Gauge({
    name: 'gateway_webhook_oldest_pending_age_seconds',
    help: 'age of the oldest pending webhook delivery, seconds (0 when none)',
    registers,
    async collect() {
      const { oldestCreatedAt } = await backlog();
      this.set(oldestCreatedAt === null ? 0 : Math.max(0, (Date.now() - oldestCreatedAt) / 1000));
    },
  });
  const commits = new SeriesHistogram({
    name: 'gateway_sqlite_commit_duration_seconds',
    help: "time of one SQLite commit of the tick transaction (a tick's writes: events, deliveries, messages)",
    labelNames: [],
    buckets: COMMIT_BUCKETS,
    emitEmpty: true,
    registers,
  });
  const commitSeries = commits.series();
  const decryption = decryptionCounters(registers);

  return {
    registry,
    contentType: registry.contentType,
    httpRequests,
    httpLatency,
    events,
    webhookAttempts,
    observeEvent(event) {
      events.inc({ event: event.event });
      if (event.event === 'message.sent') messages.inc({ direction: 'out' });
      else if (event.event === 'message.failed') {
        const reason = (event.payload as { reason?: string }).reason;
        if (FAILURE_REASONS.includes(reason as FailureReason)) failed.inc({ reason });
      }
      else if (event.event === 'message.received') messages.inc({ direction: (event.payload as { fromMe?: boolean }).fromMe ? 'out' : 'in' });
    },
    observeAttempt({ status, attempts, durationMs }) {
      webhookAttempts.inc({ outcome: status === 'pending' ? 'retry' : status });
      attemptSeries[status].observe(durationMs / 1000);
      if (status !== 'pending') finalSeries[status].observe(attempts);
    },
    observeReconnect: (engine, reason) => reconnects.inc({ engine, reason }),
    observeDecryption: decryption.observe,
    forgetSession: decryption.forget,
    observeHealth: ({ state, step, reason }) => healthTransitions.inc({ state, step, reason }),
    observeCommit: (seconds) => commitSeries.observe(seconds),
    render: () => registry.metrics(),
  };
}

/**
 * Decryption health per session: retry receipts by direction, failures by kind, exhausted retries by direction. A
 * session's series start at zero at its first signal; a deleted session's are removed.
 */
function decryptionCounters(registers: Registry[]) {
  const retryReceipts = new Counter({
    name: 'gateway_decryption_retry_receipts_total',
    help: 'retry receipts by session and direction: sent (the session could not decrypt a message and asked its sender again), received (a recipient asked the session to send one again)',
    labelNames: ['session', 'direction'],
    registers,
  });
  const failures = new Counter({
    name: 'gateway_decryption_failures_total',
    help: 'incoming messages that could not be decrypted, by session and kind (bad_mac, no_session, invalid_prekey, spent_key, absent, other)',
    labelNames: ['session', 'kind'],
    registers,
  });
  const exhausted = new Counter({
    name: 'gateway_decryption_retries_exhausted_total',
    help: 'messages whose decryption retries were exhausted, by session and direction: incoming (message.undecryptable), outgoing (message.failed, decryption_retry_exhausted)',
    labelNames: ['session', 'direction'],
    registers,
  });
  const seen = new Set<string>();
  const start = (session: string) => {
    if (seen.has(session)) return;
    seen.add(session);
    for (const direction of ['sent', 'received']) retryReceipts.inc({ session, direction }, 0);
    for (const kind of DECRYPTION_FAILURE_KINDS) failures.inc({ session, kind }, 0);
    for (const direction of ['incoming', 'outgoing']) exhausted.inc({ session, direction }, 0);
  };
  return {
    observe(session: string, signal: DecryptionSignal): void {
      start(session);
      if (signal.kind === 'retry_receipt') retryReceipts.inc({ session, direction: signal.direction });
      else if (signal.kind === 'failure') failures.inc({ session, kind: signal.failure });
      else exhausted.inc({ session, direction: signal.direction });
    },
    forget(session: string): void {
      if (!seen.delete(session)) return;
      for (const direction of ['sent', 'received']) retryReceipts.remove({ session, direction });
      for (const kind of DECRYPTION_FAILURE_KINDS) failures.remove({ session, kind });
      for (const direction of ['incoming', 'outgoing']) exhausted.remove({ session, direction });
    },
  };
}

export interface HistogramSeries {
  observe(value: number): void;
}

/**
 * A histogram whose label sets are taken once, up front, as series that count into fixed arrays. prom-client's
 * Histogram validates and hashes the labels on every observation (about a microsecond); this costs a bucket search.
 * Registered in a prom-client Registry like any metric, and rendered in the same text format.
 */
export class SeriesHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly labelNames: readonly string[];
  private readonly buckets: readonly number[];
  private readonly emitEmpty: boolean;
  private readonly all = new Map<string, { labels: Record<string, string>; counts: Float64Array; sum: number; count: number }>();

  constructor(options: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[]; emitEmpty: boolean; registers: Registry[] }) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.buckets = [...options.buckets].sort((a, b) => a - b);
    this.emitEmpty = options.emitEmpty;
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  /** The series of these label values (in labelNames order), made on first call and shared after. */
  series(...values: string[]): HistogramSeries {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name} takes ${this.labelNames.length} label values`);
    const key = values.join('\u0000');
    let state = this.all.get(key);
    if (!state) {
      const labels = Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]!]));
      state = { labels, counts: new Float64Array(this.buckets.length), sum: 0, count: 0 };
      this.all.set(key, state);
    }
    const { buckets } = this;
    const series = state;
    return {
      observe(value: number) {
        let i = 0;
        while (i < buckets.length && value > buckets[i]!) i += 1;
        if (i < buckets.length) series.counts[i]! += 1;
        series.sum += value;
        series.count += 1;
      },
    };
  }

  /** What prom-client's registry renders: per series, cumulative buckets, +Inf, sum and count. */
  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> } {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const { labels, counts, sum, count } of this.all.values()) {
      if (count === 0 && !this.emitEmpty) continue;
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const state of this.all.values()) {
      state.counts.fill(0);
      state.sum = 0;
      state.count = 0;
    }
  }
}
