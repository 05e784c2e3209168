// The outbox dispatcher: sends due deliveries (p-queue; global and per-webhook caps), signs them, records every outcome, schedules retries.
import PQueue from 'p-queue';
import type { Dispatcher } from 'undici';
import type { GatewayConfig } from '../config/types.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { Logger } from '../logger.js';
import type { DeliveryOutcome, DueDelivery, NewDelivery, OutboxRepo } from '../store/outbox.js';
import { postDelivery, type DeliveryOutcome as HttpOutcome } from './http-delivery.js';
import { openedQrBody } from './pairing-qr.js';
import { DISABLED_ERROR, type WebhookChange, type WebhookRegistry } from './registry.js';
import { retryDelaySeconds } from './retry-policy.js';
import { signDelivery, signatureHeader, timestampedSignatureHeader } from './signer.js';

export type WebhookSettings = GatewayConfig['webhooks'];

export interface DispatcherOptions {
  outbox: OutboxRepo;
  registry: WebhookRegistry;
  /** opens what a delivery holds sealed at rest (a pairing QR) */
  box: SecretBox;
  /** the guarded undici dispatcher every attempt goes through (URL guard at connect time) */
  http: Dispatcher;
  settings: WebhookSettings;
  logger?: Logger;
  /** how many due rows one read of the store prefetches per webhook */
  batchSize?: number;
  /** outcomes are gathered this long (ms) and written in one transaction; a crash in between only repeats those attempts */
  flushIntervalMs?: number;
  /** how often succeeded and failed rows older than settings.retentionDays are pruned */
  pruneIntervalMs?: number;
  /** called before outcomes are written: joins the tick's transaction so many writes share one commit */
  beginWrite?: () => void;
  /** told of every outcome once it is written (metrics, benchmarks) */
  onOutcome?: (outcome: AttemptOutcome) => void;
  /** in a cluster, how often the shared outbox is scanned for rows no node attempts (others' events, lapsed claims) */
  rescanEveryMs?: number;
}

/** An attempt's outcome as it is written, with how long the attempt took. */
export type AttemptOutcome = DeliveryOutcome & { durationMs: number };

const DAY_MS = 86_400_000;
const MAX_UNWRITTEN_OUTCOMES = 1024;
/** how long one round may hand rows to the queue before it lets the event loop answer others (a backlog of 100 webhooks) */
const ROUND_BUDGET_MS = 8;

/**
 * Picks due pending rows per webhook (oldest first, never one row twice at once), runs each attempt in a p-queue with
 * the global concurrency while keeping each webhook under its in-flight cap, and writes outcomes in one transaction
 * per tick. Wakes when the outbox writes rows, when a retry falls due (one timer for the earliest), and on changes.
 */
export class WebhookDispatcher {
  private readonly queue: PQueue;
  private readonly batchSize: number;
  /** prefetched due rows per webhook, not yet handed to the queue */
  private readonly buffers = new Map<number, DueDelivery[]>();
  /** webhooks whose buffer holds every due row (the last read came back short): new rows are appended, not re-read */
  private readonly live = new Set<number>();
  /** rows queued, being sent, or with an outcome not yet written: never picked again meanwhile */
  private readonly claimed = new Set<string>();
  /** per webhook: how many of `claimed` are its rows (a read of its due rows skips that many) */
  private readonly claimedOf = new Map<number, number>();
  /** per webhook: rows queued or being sent */
  private readonly inFlight = new Map<number, number>();
  /** webhooks that may have work */
  private readonly dirty = new Set<number>();
  /** per webhook: the earliest known future retry */
  private readonly dueAt = new Map<number, number>();
  /** outcomes waiting to be written, by delivery id, and their webhooks */
  private readonly outcomes = new Map<string, AttemptOutcome>();
  private readonly webhookOf = new Map<string, number>();
  /** in-flight rows re-queued by hand: whatever the attempt's result, they go again with a fresh budget */
  private readonly rearmed = new Set<string>();
  /** outcomes of batches being written, by delivery id; and those of them re-queued by hand meanwhile */
  private readonly writing = new Map<string, AttemptOutcome>();
  private readonly requeuedWhileWriting = new Set<string>();
  /** batches of outcomes being written (stop waits for them) */
  private readonly writes = new Set<Promise<void>>();
  /** per webhook: moved on by each resync, so a read of its due rows begun before one is not trusted after it */
  private readonly resyncs = new Map<number, number>();
  private tickScheduled = false;
  /** a round is under way (it waits on the store while refilling a buffer); another asked meanwhile runs after it */
  private ticking = false;
  private tickAgain = false;
  /** until start has released the previous run's claims and read what is due, no round runs */
  private started = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private pruneTimer: NodeJS.Timeout | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private running = false;
  private closed = false;
  private stopping: Promise<void> | undefined;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: DispatcherOptions) {
    this.queue = new PQueue({ concurrency: options.settings.concurrency });
    this.batchSize = options.batchSize ?? 256;
    this.unsubscribe = options.registry.onChange((change) => this.onChange(change));
  }

  /** Resumes every pending row (also after kill -9) and starts the periodic prune. */
  async start(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = true;
    const now = Date.now();
    try {
      // in a cluster, the claims this node's previous run held (killed before it could end them) are free at once
      await this.options.outbox.releaseOwnClaims();
      const due = await this.options.outbox.nextDuePerWebhook();
      await Promise.all(due.map(({ webhookId }) => this.resync(webhookId, now)));
    } finally {
      this.started = true;
    }
    this.prune();
    this.pruneTimer = setInterval(() => this.prune(), this.options.pruneIntervalMs ?? 3_600_000);
    this.pruneTimer.unref();
    if (this.options.outbox.shared) {
      this.rescanTimer = setInterval(() => void this.rescan(), this.options.rescanEveryMs ?? 2000);
      this.rescanTimer.unref();
    }
    this.scheduleTick();
  }

  /** The outbox wrote these rows: a webhook whose buffer is caught up takes them as they are, without re-reading. */
  notify(deliveries: readonly NewDelivery[]): void {
    for (const d of deliveries) {
      this.dirty.add(d.webhookId);
      // in a cluster a row is attempted once claimed, which `due` does: no webhook is ever caught up
      if (!this.live.has(d.webhookId)) continue;
      let buffer = this.buffers.get(d.webhookId);
      if (!buffer) this.buffers.set(d.webhookId, (buffer = []));
      if (buffer.length >= this.batchSize) {
        // too far behind: leave the rest in the store and read it in order later
        this.live.delete(d.webhookId);
        continue;
      }
      buffer.push({ id: d.id, webhookId: d.webhookId, event: d.event, body: d.body, attempts: 0, budgetStart: 0 });
    }
    this.scheduleTick();
  }

  /** Stops picking rows, waits for in-flight attempts up to `budgetMs`, writes their outcomes; runs once. */
  stop(budgetMs = 4000): Promise<void> {
    return (this.stopping ??= (async () => {
      this.running = false;
      this.unsubscribe();
      clearTimeout(this.timer);
      clearInterval(this.pruneTimer);
      clearInterval(this.rescanTimer);
      this.queue.clear();
      let budget: NodeJS.Timeout | undefined;
      await Promise.race([this.queue.onIdle(), new Promise<void>((done) => (budget = setTimeout(done, budgetMs)))]);
      clearTimeout(budget);
      await this.flush();
      await Promise.all(this.writes);
      this.closed = true;
    })());
  }

  /** Rows being sent or queued right now (for tests and metrics). */
  get active(): number {
    return this.queue.pending + this.queue.size;
  }

  private onChange(change: WebhookChange): void {
    if (this.closed) return;
    const now = Date.now();
    if (change.type === 'deleted') {
      this.buffers.delete(change.webhookId);
      this.live.delete(change.webhookId);
      this.dueAt.delete(change.webhookId);
      return;
    }
    if (change.type === 'requeued') {
      const unwritten = this.outcomes.get(change.deliveryId);
      if (unwritten) Object.assign(unwritten, { status: 'pending', budgetStart: unwritten.attempts, nextAttemptAt: now });
      // its outcome is being written and may land after the re-queue: it is re-queued again once written
      else if (this.writing.has(change.deliveryId)) this.requeuedWhileWriting.add(change.deliveryId);
      else if (this.claimed.has(change.deliveryId)) this.rearmed.add(change.deliveryId);
    }
    this.resync(change.webhookId, now).then(
      () => this.scheduleTick(),
      // the shared database is out of reach (a cluster's): the next scan finds the webhook's rows
      (err: unknown) => this.options.logger?.error({ err, webhookId: change.webhookId }, 'could not read the due deliveries'),
    );
  }

  /** Forgets what is buffered for a webhook and re-reads when its pending rows are due. */
  private async resync(webhookId: number, now: number): Promise<void> {
    this.buffers.delete(webhookId);
    this.live.delete(webhookId);
    this.dueAt.delete(webhookId);
    this.resyncs.set(webhookId, (this.resyncs.get(webhookId) ?? 0) + 1);
    const [first, later] = await Promise.all([this.options.outbox.nextDueAfter(webhookId, -1), this.options.outbox.nextDueAfter(webhookId, now)]);
    if (first === null) return;
    if (first > now) return this.noteDue(webhookId, first);
    this.dirty.add(webhookId);
    if (later !== null) this.noteDue(webhookId, later);
  }

  private noteDue(webhookId: number, at: number): void {
    const known = this.dueAt.get(webhookId);
    if (known === undefined || at < known) this.dueAt.set(webhookId, at);
    this.armTimer(at);
  }

  /** One timer, set for the earliest known retry. */
  private armTimer(at: number): void {
    if (!this.running || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => void this.onTimer(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private async onTimer(): Promise<void> {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (!this.running) return;
    const now = Date.now();
    const fired: number[] = [];
    let next = Infinity;
    for (const [id, at] of this.dueAt) {
      if (at <= now) fired.push(id);
      else next = Math.min(next, at);
    }
    if (next < Infinity) this.armTimer(next);
    // resync re-reads each fired webhook's rows and notes its later retries
    try {
      await Promise.all(fired.map((id) => this.resync(id, now)));
    } catch (err) {
      // the shared database is out of reach (a cluster's): the next scan finds these rows
      this.options.logger?.error({ err }, 'could not read the due deliveries');
    }
    this.tick();
  }

  /**
   * In a cluster: rows other nodes recorded, or left when they died, are found here. What is due now is claimed at the
   * next round, what is due later gets the timer; what this node already knows of is kept (its outcomes may not be
   * written yet).
   */
  private async rescan(): Promise<void> {
    if (!this.running) return;
    const now = Date.now();
    try {
      for (const { webhookId, at } of await this.options.outbox.nextDuePerWebhook()) {
        if (at <= now) this.dirty.add(webhookId);
        else this.noteDue(webhookId, at);
      }
    } catch (err) {
      // the shared database is out of reach: the next scan tries again
      this.options.logger?.error({ err }, 'could not scan the outbox');
      return;
    }
    this.tick();
  }

  private scheduleTick(): void {
    if (this.tickScheduled) return;
    this.tickScheduled = true;
    setImmediate(() => {
      this.tickScheduled = false;
      this.tick();
    });
  }

  private scheduleFlush(): void {
    if (this.outcomes.size >= MAX_UNWRITTEN_OUTCOMES) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      setImmediate(() => void this.flush());
    } else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush(), this.options.flushIntervalMs ?? 10);
    }
  }

  /**
   * One round: hand due rows to the queue, per dirty webhook, up to its in-flight cap. Rows already buffered are handed
   * on without a wait; only a refill reads the store. One round at a time: one asked for meanwhile runs after it.
   */
  private tick(): void {
    if (!this.running || !this.started) return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    const round = this.round();
    // a round that never waited has ended already: no promise to follow
    if (round) {
      round
        .catch((err: unknown) => this.options.logger?.error({ err }, 'webhook dispatch round failed'))
        .finally(() => this.endRound());
    } else this.endRound();
  }

  private endRound(): void {
    this.ticking = false;
    if (this.tickAgain) {
      this.tickAgain = false;
      this.scheduleTick();
    }
  }

  /** A round's work; a promise only when it had to read the store (the rest of the round then follows the read). */
  private round(): Promise<void> | undefined {
    const now = Date.now();
    const started = performance.now();
    const cap = this.options.settings.perWebhookConcurrency;
    for (const webhookId of this.dirty) {
      // the webhooks left stay dirty for the next round
      if (performance.now() - started > ROUND_BUDGET_MS) {
        this.scheduleTick();
        return undefined;
      }
      this.dirty.delete(webhookId);
      if (!this.options.registry.activeWebhook(webhookId)) {
        this.buffers.delete(webhookId);
        this.live.delete(webhookId);
        continue;
      }
      const refill = this.handOut(webhookId, cap, now, false);
      if (refill) return refill.then(() => this.round());
    }
    return undefined;
  }

  /**
   * Hands a webhook's buffered rows to the queue up to its cap. When the buffer runs dry and may not hold every due row,
   * returns the read that refills it, which hands out the rest once it answers.
   */
  private handOut(webhookId: number, cap: number, now: number, refilled: boolean): Promise<void> | undefined {
    let buffer = this.buffers.get(webhookId);
    while ((this.inFlight.get(webhookId) ?? 0) < cap) {
      if (!buffer || buffer.length === 0) {
        if (refilled || this.live.has(webhookId)) break;
        return this.refill(webhookId, cap, now);
      }
      const row = buffer.shift()!;
      if (this.claimed.has(row.id)) continue;
      this.claim(row.id, webhookId);
      this.inFlight.set(webhookId, (this.inFlight.get(webhookId) ?? 0) + 1);
      this.queue.add(() => this.attempt(row)).catch((err: unknown) => this.options.logger?.error({ err, deliveryId: row.id }, 'webhook attempt crashed'));
    }
    if (buffer && buffer.length === 0 && this.buffers.get(webhookId) === buffer) this.buffers.delete(webhookId);
    return undefined;
  }

  private async refill(webhookId: number, cap: number, now: number): Promise<void> {
    const shared = this.options.outbox.shared;
    const resyncs = this.resyncs.get(webhookId);
    // claims are taken for what goes out now: a claimed row waiting in a buffer would be held from every other node
    const limit = shared ? cap - (this.inFlight.get(webhookId) ?? 0) : this.batchSize + (this.claimedOf.get(webhookId) ?? 0);
    let rows: DueDelivery[];
    try {
      rows = await this.options.outbox.due(webhookId, now, limit);
    } catch (err) {
      // the shared database is out of reach (a cluster's): the rows stay where they are, the next scan finds them
      this.options.logger?.error({ err, webhookId }, 'could not claim due deliveries');
      return;
    }
    const buffer = rows.filter((row) => !this.claimed.has(row.id));
    if (!this.running || !this.options.registry.activeWebhook(webhookId) || this.resyncs.get(webhookId) !== resyncs) {
      // changed while the rows were read (deleted, disabled, re-synced): the next round reads again; claimed rows lapse
      if (this.resyncs.get(webhookId) !== resyncs) this.dirty.add(webhookId);
      return;
    }
    // rows written meanwhile were only marked dirty (the webhook was not live), so the read is the whole buffer
    if (rows.length < limit && !shared) this.live.add(webhookId);
    this.buffers.set(webhookId, buffer);
    if (buffer.length === 0) return;
    this.handOut(webhookId, cap, now, true);
  }

  /** Writes the outcomes gathered so far in one transaction (joined to the tick), then frees their rows. */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.outcomes.size === 0 || this.closed) return Promise.resolve();
    const batch = [...this.outcomes.values()];
    this.outcomes.clear();
    for (const outcome of batch) this.writing.set(outcome.id, outcome);
    const write = this.writeBatch(batch);
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
    return write;
  }

  private async writeBatch(batch: AttemptOutcome[]): Promise<void> {
    let written = false;
    try {
      this.options.beginWrite?.();
      await this.options.outbox.recordOutcomes(batch);
      written = true;
    } catch (err) {
      this.options.logger?.error({ err, count: batch.length }, 'could not record webhook outcomes; the deliveries stay pending');
    }
    const now = Date.now();
    const shared = this.options.outbox.shared;
    for (const outcome of batch) {
      this.writing.delete(outcome.id);
      if (this.requeuedWhileWriting.delete(outcome.id) && !this.closed) {
        // re-queued by hand while this outcome was being written: written again as pending, with a fresh budget
        this.outcomes.set(outcome.id, { ...outcome, status: 'pending', budgetStart: outcome.attempts, nextAttemptAt: now, at: now });
        this.scheduleFlush();
        continue;
      }
      this.unclaim(outcome.id, this.webhookOf.get(outcome.id));
      // a retry due at once can only be picked now that its row is written and released; in a cluster every written
      // outcome ends a claim, which frees a place under the webhook's cap counted in the store
      if (shared || (outcome.status === 'pending' && outcome.nextAttemptAt !== null && outcome.nextAttemptAt <= now)) {
        const webhookId = this.webhookOf.get(outcome.id);
        if (webhookId !== undefined) {
          this.dirty.add(webhookId);
          this.live.delete(webhookId);
        }
      }
      this.webhookOf.delete(outcome.id);
    }
    if (this.running && this.dirty.size) this.scheduleTick();
    if (written && this.options.onOutcome) for (const outcome of batch) this.options.onOutcome(outcome);
  }

  private async attempt(row: DueDelivery): Promise<void> {
    const webhook = this.running ? this.options.registry.activeWebhook(row.webhookId) : undefined;
    if (!webhook) {
      // stopping, or the webhook was disabled (its pending rows are failed) or deleted (its rows are gone) meanwhile
      this.release(row);
      return;
    }
    const body = Buffer.from(row.event === 'session.qr' ? openedQrBody(this.options.box, row.body) : row.body);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = signDelivery(webhook.signatureScheme, timestamp, body, webhook.hmacKey);
    const headers: Record<string, string> = {
      ...webhook.headerObject,
      'Content-Type': 'application/json',
      'X-Webhook-Signature': signatureHeader(signature, this.options.settings.signaturePrefix),
      'X-Webhook-Signature-256': timestampedSignatureHeader(timestamp, body, webhook.hmacKey),
      'X-Webhook-Id': row.id,
      'X-Webhook-Event': row.event,
      'X-Webhook-Timestamp': timestamp,
      'X-Webhook-Attempt': String(row.attempts + 1),
    };
    let result: HttpOutcome;
    try {
      result = await postDelivery(this.options.http, { url: webhook.target, body, headers, timeoutMs: this.options.settings.timeoutMs });
    } catch (err) {
      result = { ok: false, error: (err as Error).message ?? String(err), durationMs: 0 };
    }
    this.complete(row, result);
  }

  private claim(id: string, webhookId: number): void {
    this.claimed.add(id);
    this.claimedOf.set(webhookId, (this.claimedOf.get(webhookId) ?? 0) + 1);
  }

  private unclaim(id: string, webhookId: number | undefined): void {
    if (!this.claimed.delete(id) || webhookId === undefined) return;
    const left = (this.claimedOf.get(webhookId) ?? 1) - 1;
    if (left > 0) this.claimedOf.set(webhookId, left);
    else this.claimedOf.delete(webhookId);
  }

  private release(row: DueDelivery): void {
    this.unclaim(row.id, row.webhookId);
    this.rearmed.delete(row.id);
    this.inFlight.set(row.webhookId, Math.max(0, (this.inFlight.get(row.webhookId) ?? 1) - 1));
  }

  private complete(row: DueDelivery, result: HttpOutcome): void {
    this.inFlight.set(row.webhookId, Math.max(0, (this.inFlight.get(row.webhookId) ?? 1) - 1));
    if (this.closed) return;
    const now = Date.now();
    const attempts = row.attempts + 1;
    const outcome: AttemptOutcome = {
      id: row.id,
      status: 'succeeded',
      attempts,
      budgetStart: row.budgetStart,
      nextAttemptAt: null,
      lastStatusCode: result.statusCode ?? null,
      lastError: result.ok ? null : (result.error ?? 'failed'),
      at: now,
      durationMs: result.durationMs,
    };
    const webhook = this.options.registry.activeWebhook(row.webhookId);
    if (this.rearmed.delete(row.id)) {
      Object.assign(outcome, { status: 'pending', budgetStart: attempts, nextAttemptAt: now });
    } else if (result.ok) {
      // succeeded
    } else if (!webhook) {
      Object.assign(outcome, { status: 'failed', lastError: `${outcome.lastError}; ${DISABLED_ERROR}` });
    } else {
      const tries = attempts - row.budgetStart;
      if (tries < 1 + webhook.retries.attempts) {
        const at = now + retryDelaySeconds(webhook.retries, tries) * 1000;
        Object.assign(outcome, { status: 'pending', nextAttemptAt: at });
        if (at > now) this.noteDue(row.webhookId, at);
      } else {
        outcome.status = 'failed';
        this.options.logger?.warn({ deliveryId: row.id, webhookId: row.webhookId, attempts, error: outcome.lastError }, 'webhook delivery failed');
      }
    }
    this.outcomes.set(row.id, outcome);
    this.webhookOf.set(row.id, row.webhookId);
    this.scheduleFlush();
    this.dirty.add(row.webhookId);
    this.scheduleTick();
  }

  private prune(): void {
    this.options.outbox.pruneFinished(Date.now() - this.options.settings.retentionDays * DAY_MS).then(
      (removed) => {
        if (removed) this.options.logger?.info({ removed }, 'pruned old webhook deliveries');
      },
      (err: unknown) => this.options.logger?.error({ err }, 'could not prune webhook deliveries'),
    );
  }
}
