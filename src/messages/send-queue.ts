// The send governor's durable queue runner (issue 31): the sends of a session that must wait for their turn are written
// (and committed) before their caller is answered, then sent one at a time, in order, each when the pace and the gap to
// its chat allow, plus a random jitter. An entry carries the message id chosen when it was queued: after a crash it is
// sent again under the same id, unless its message is in the store already (then it is only completed). A sync send's
// request waits for its entry's outcome; an async one's outcome is a command.result event, after a restart too.
import { randomUUID } from 'node:crypto';
import { GatewayError, notFound, RateLimitedError } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import type { Logger } from '../logger.js';
import type { QueueEntry, QueuedSend, SendQueueRepo } from '../store/send-queue.js';
import type { GovernorPolicy, Pacer } from './governor.js';

/** What a queued send's result looks like (MessagingService's SendResult, kept structural here). */
export type QueuedResult = { messageId: string };

export interface SendQueueDeps {
  repo: SendQueueRepo;
  /** settles once the writes made so far are committed */
  committed: () => Promise<void> | undefined;
  /** sends an entry; `recorded` runs in the tick that stores its message (the entry is completed with it) */
  deliver(entry: QueuedSend, recorded: () => void): Promise<QueuedResult>;
  /** the result of an entry whose message the store holds already (sent before a crash), or undefined */
  sentBefore(entry: QueuedSend): Promise<QueuedResult | undefined>;
  policy(session: string): Promise<GovernorPolicy>;
  pacer: Pacer;
  bus: EventBus;
  logger: Logger;
  limits: { maxEntries: number; maxBytes: number };
  /** an entry left the queue unsent (cancelled or failed) */
  dropped?(entry: QueuedSend): void;
  /** how long a session that cannot send (not connected here) waits before its queue is tried again, ms */
  retryMs?: number;
}

const MAX_RETRY_MS = 60_000;

/** Errors after which an entry stays queued: the session is not here or not connected (it is tried again later). */
const NOT_NOW: ReadonlySet<string> = new Set(['SESSION_NOT_CONNECTED', 'SESSION_NOT_STARTED', 'SESSION_ON_OTHER_NODE', 'STORE_UNAVAILABLE', 'SHUTTING_DOWN']);

interface Waiter {
  session: string;
  resolve(result: QueuedResult): void;
  reject(err: unknown): void;
}

export interface Enqueued {
  entry: QueuedSend;
  /** its place when it was queued (1: next) */
  position: number;
  /** a held send (no command id): settles with its result once it is sent, rejects when it fails or is cancelled */
  outcome?: Promise<QueuedResult>;
}

export class SendQueue {
  /** queued entries per session, in memory (loaded when the session connects or the daemon starts) */
  private readonly waiting = new Map<string, number>();
  private readonly seqs = new Map<string, number>();
  /** the entry each session is sending now (it cannot be cancelled) */
  private readonly sending = new Map<string, string>();
  /** entries a cancel is taking out or took out: the runner skips them (it may hold one it read before the cancel) */
  private readonly cancelling = new Set<string>();
  private readonly runners = new Map<string, Promise<void>>();
  /** a session's runner sleeping until its head's turn: woken early by a cancel */
  private readonly sleepers = new Map<string, { timer: NodeJS.Timeout; wake(): void }>();
  private readonly waiters = new Map<string, Waiter>();
  /** how long a session that could not send waits before its queue is tried again */
  private readonly retryDelays = new Map<string, number>();
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: SendQueueDeps) {}

  /** Loads the sessions with waiting sends and runs their queues; a session connecting later has its queue loaded then. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.bus.subscribe((event) => {
      if (event.event === 'session.connected') void this.reload(event.session);
    });
    for (const session of await this.deps.repo.sessionsWithQueued()) await this.reload(session);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const sleeper of this.sleepers.values()) clearTimeout(sleeper.timer);
    this.sleepers.clear();
  }

  /** The session has sends waiting: a new one goes behind them, whatever the pace allows. */
  hasWaiting(session: string): boolean {
    return (this.waiting.get(session) ?? 0) > 0;
  }

  /** Writes the send and commits it; returns it with its place. 429 SEND_QUEUE_FULL when the session's queue is full. */
  async enqueue(input: Omit<QueuedSend, 'id' | 'seq' | 'queuedAt'>): Promise<Enqueued> {
    const { session } = input;
    const totals = await this.deps.repo.totals(session);
    const { maxEntries, maxBytes } = this.deps.limits;
    if (totals.entries >= maxEntries || totals.bytes + input.bytes > maxBytes) {
      const policy = await this.deps.policy(session);
      throw new RateLimitedError(
        'SEND_QUEUE_FULL',
        `session ${session} has ${totals.entries} sends (${totals.bytes} bytes) waiting, the most it may (governor.queueMaxEntries ${maxEntries}, governor.queueMaxBytes ${maxBytes})`,
        60 / policy.perMinute,
        [{ path: totals.entries >= maxEntries ? '/governor/queueMaxEntries' : '/governor/queueMaxBytes', message: 'the session\'s queue is full' }],
      );
    }
    const seq = await this.nextSeq(session);
    const entry: QueuedSend = { ...input, id: randomUUID(), seq, queuedAt: Date.now() };
    // told before the entry exists: a running queue may send it as soon as it is written
    const outcome = input.commandId === null ? new Promise<QueuedResult>((resolve, reject) => this.waiters.set(entry.id, { session, resolve, reject })) : undefined;
    try {
      await this.deps.repo.add(entry);
      await this.deps.committed();
    } catch (err) {
      this.waiters.delete(entry.id);
      throw err;
    }
    this.waiting.set(session, (this.waiting.get(session) ?? 0) + 1);
    const position = (await this.deps.repo.ahead(session, seq)) + 1;
    this.kick(session);
    return { entry, position, ...(outcome ? { outcome } : {}) };
  }

  /** The session's waiting sends in order, with their places. */
  async list(session: string, limit: number, offset: number): Promise<{ entries: Array<QueueEntry & { position: number }>; total: number }> {
    const [page, totals] = await Promise.all([this.deps.repo.page(session, limit, offset), this.deps.repo.totals(session)]);
    return { entries: page.map((entry, i) => ({ ...entry, position: offset + i + 1 })), total: totals.entries };
  }

  /** Takes a waiting send out; 404 when there is none of that id, 409 when it is being sent now. */
  async cancel(session: string, id: string): Promise<QueuedSend> {
    // decided at once, before any wait: the runner checks `cancelling` right before it sends, and marks `sending` first
    if (this.sending.get(session) === id) throw new GatewayError('QUEUE_ENTRY_SENDING', `send ${id} is being sent now and can no longer be cancelled`);
    this.cancelling.add(id);
    try {
      const entry = (await this.deps.repo.queued(session)).find((e) => e.id === id);
      if (!entry || !(await this.deps.repo.cancel(session, id))) throw notFound('QUEUE_ENTRY_NOT_FOUND', `queued send ${id} of session ${session}`);
      await this.deps.committed();
      this.settled(entry, { error: new GatewayError('SEND_CANCELLED', `send ${id} was cancelled before it was sent`) });
      this.sleepers.get(session)?.wake();
      // kept, so a runner that read the entry before the cancel does not send it; the oldest go past a bound
      if (this.cancelling.size > 10_000) this.cancelling.delete(this.cancelling.values().next().value!);
      return entry;
    } catch (err) {
      this.cancelling.delete(id);
      throw err;
    }
  }

  /** A deleted session: its entries went with it (the foreign key); its held requests are told. */
  forget(session: string): void {
    this.waiting.delete(session);
    this.retryDelays.delete(session);
    for (const [id, waiter] of this.waiters) {
      if (waiter.session !== session) continue;
      this.waiters.delete(id);
      waiter.reject(notFound('SESSION_NOT_FOUND', `session ${session} (deleted while the send waited in its queue)`));
    }
    this.seqs.delete(session);
    this.sleepers.get(session)?.wake();
  }

  private async reload(session: string): Promise<void> {
    this.retryDelays.delete(session);
    const { entries } = await this.deps.repo.totals(session);
    this.waiting.set(session, entries);
    if (entries) this.kick(session);
  }

  private async nextSeq(session: string): Promise<number> {
    const seq = Math.max(this.seqs.get(session) ?? 0, await this.deps.repo.maxSeq(session)) + 1;
    this.seqs.set(session, seq);
    return seq;
  }

  /** Runs the session's queue unless it runs already. */
  private kick(session: string): void {
    if (this.stopped || this.runners.has(session)) return;
    const runner = this.run(session)
      .catch((err: unknown) => this.deps.logger.error({ err, session }, 'send queue runner failed; retrying'))
      .finally(() => {
        this.runners.delete(session);
        if (this.stopped || !this.hasWaiting(session)) return;
        // a session that cannot send here is tried again later and later (up to a minute); its connecting reloads it at once
        const delay = Math.min(MAX_RETRY_MS, (this.retryDelays.get(session) ?? (this.deps.retryMs ?? 2000) / 2) * 2);
        this.retryDelays.set(session, delay);
        setTimeout(() => this.kick(session), delay).unref();
      });
    this.runners.set(session, runner);
  }

  private async run(session: string): Promise<void> {
    while (!this.stopped) {
      const entry = await this.deps.repo.head(session);
      if (!entry) {
        this.waiting.set(session, 0);
        return;
      }
      if (this.cancelling.has(entry.id)) {
        await this.sleep(session, 10); // its cancel is taking it out of the store
        continue;
      }
      const previous = await this.deps.sentBefore(entry);
      if (previous) {
        this.deps.repo.completed(entry, Date.now());
        await this.deps.committed();
        this.settled(entry, { result: previous });
        continue;
      }
      const policy = await this.deps.policy(session);
      const wait = policy.exempt ? 0 : this.deps.pacer.waitMs(session, entry.chatId, policy);
      if (wait > 0) {
        await this.sleep(session, wait + this.deps.pacer.jitterMs(policy));
        continue; // the head may have been cancelled meanwhile, or the policy changed
      }
      // from here on the entry is this runner's: a cancel now is refused (checked with no wait in between)
      if (this.cancelling.delete(entry.id)) continue;
      this.sending.set(session, entry.id);
      if (!policy.exempt) this.deps.pacer.take(session, entry.chatId, policy);
      try {
        const result = await this.deps.deliver(entry, () => this.deps.repo.completed(entry, Date.now()));
        this.retryDelays.delete(session);
        this.settled(entry, { result });
      } catch (err) {
        const code = err instanceof GatewayError ? err.code : 'INTERNAL';
        if (NOT_NOW.has(code)) return; // kept; tried again after retryMs
        // a refusal (a URL that no longer downloads, a quote gone) will not change: the entry is dropped and its caller told
        if (!(err instanceof GatewayError)) this.deps.logger.error({ err, session, entry: entry.id }, 'queued send failed');
        await this.deps.repo.cancel(session, entry.id);
        this.settled(entry, { error: err });
      } finally {
        this.sending.delete(session);
      }
    }
  }

  private sleep(session: string, ms: number): Promise<void> {
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(session);
        done();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.set(session, { timer, wake });
    });
  }

  /** The entry left the queue: its request or its command.result is told (a dropped first contact is counted no more). */
  private settled(entry: QueuedSend, outcome: { result: QueuedResult } | { error: unknown }): void {
    if ('error' in outcome && entry.firstContact) this.deps.dropped?.(entry);
    this.waiting.set(entry.session, Math.max(0, (this.waiting.get(entry.session) ?? 1) - 1));
    const waiter = this.waiters.get(entry.id);
    this.waiters.delete(entry.id);
    if ('result' in outcome) waiter?.resolve(outcome.result);
    else waiter?.reject(outcome.error);
    if (!entry.commandId) return;
    if ('result' in outcome) {
      this.deps.bus.emit(entry.session, 'command.result', { commandId: entry.commandId, success: true, result: outcome.result });
      return;
    }
    const error = outcome.error instanceof GatewayError ? outcome.error : new GatewayError('INTERNAL', (outcome.error as Error).message);
    this.deps.bus.emit(entry.session, 'command.result', { commandId: entry.commandId, success: false, error: { code: error.code, message: error.message } });
  }
}
