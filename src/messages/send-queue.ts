// The send governor's durable queue runner (issue 31): the sends of a session that must wait for their turn are written
// (and committed) before their caller is answered, then sent one at a time, in order, each when the pace and the gap to
// its chat allow, plus a random jitter. An entry carries the message id chosen when it was queued: after a crash it is
// sent again under the same id, unless its message is in the store already (then it is only completed). A sync send's
// request waits for its entry's outcome; an async one's outcome is a command.result event, after a restart too.
// The store decides between a cancel and a send: the runner claims an entry (state `sending`) before it sends it, a
// cancel removes only an entry still `queued`. A queue runs on the node where its session is connected, from its
// connecting; claims left by a crash are put back in the queue then.
import { randomUUID } from 'node:crypto';
import { GatewayError, MessageRefusedError, notFound, RateLimitedError } from '../errors.js';
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
  /** an entry left the queue unsent (cancelled or failed before WhatsApp had it) */
  dropped?(entry: QueueEntry): void;
  /** the session is connected on this node (in a cluster, only its lease holder runs it): only then is its queue run */
  sendsHere(session: string): Promise<boolean>;
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
  /** each session's enqueues, one after another: the bound check, the order and the write of one are not split by another's */
  private readonly enqueues = new Map<string, Promise<unknown>>();
  /** sessions whose claimed entries were left by a runner that is gone: its next run puts them back in the queue */
  private readonly unclaimed = new Set<string>();
  private readonly runners = new Map<string, Promise<void>>();
  /** a session's runner sleeping until its head's turn: woken early by a cancel */
  private readonly sleepers = new Map<string, { timer: NodeJS.Timeout; wake(): void }>();
  private readonly waiters = new Map<string, Waiter>();
  /** how long a session that could not send waits before its queue is tried again */
  private readonly retryDelays = new Map<string, number>();
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: SendQueueDeps) {}

  /** Runs the queues of the sessions with waiting sends that are connected here; a session connecting later has its queue run then. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.bus.subscribe((event) => {
      if (event.event === 'session.connected') this.reloadUntilRead(event.session);
    });
    for (const session of await this.deps.repo.sessionsWithQueued()) if (await this.deps.sendsHere(session)) await this.reload(session);
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
    let outcome: Promise<QueuedResult> | undefined;
    const entry = await this.oneAtATime(session, async () => {
      const entry = await this.write(input);
      // told before the entry is committed: a running queue may send it as soon as it is written
      if (input.commandId === null) outcome = new Promise<QueuedResult>((resolve, reject) => this.waiters.set(entry.id, { session, resolve, reject }));
      return entry;
    });
    try {
      await this.deps.committed();
    } catch (err) {
      this.waiters.delete(entry.id);
      throw err;
    }
    this.waiting.set(session, (this.waiting.get(session) ?? 0) + 1);
    const position = (await this.deps.repo.ahead(session, entry.seq)) + 1;
    this.kick(session);
    return { entry, position, ...(outcome ? { outcome } : {}) };
  }

  /** Checks the session's bound and writes the entry behind the others (called one at a time per session). */
  private async write(input: Omit<QueuedSend, 'id' | 'seq' | 'queuedAt'>): Promise<QueuedSend> {
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
    const entry: QueuedSend = { ...input, id: randomUUID(), seq: await this.nextSeq(session), queuedAt: Date.now() };
    await this.deps.repo.add(entry);
    return entry;
  }

  private oneAtATime<T>(session: string, work: () => Promise<T>): Promise<T> {
    const turn = (this.enqueues.get(session) ?? Promise.resolve()).then(work);
    const done = turn.then(
      () => undefined,
      () => undefined,
    );
    this.enqueues.set(session, done);
    void done.then(() => {
      if (this.enqueues.get(session) === done) this.enqueues.delete(session);
    });
    return turn;
  }

  /** The session's waiting sends in order, with their places. */
  async list(session: string, limit: number, offset: number): Promise<{ entries: Array<QueueEntry & { position: number }>; total: number }> {
    const [page, totals] = await Promise.all([this.deps.repo.page(session, limit, offset), this.deps.repo.totals(session)]);
    return { entries: page.map((entry, i) => ({ ...entry, position: offset + i + 1 })), total: totals.entries };
  }

  /**
   * Takes a waiting send out; 404 when there is none of that id, 409 when a runner claimed it (it is being sent). The
   * store decides who wins: a cancel removes only an entry still `queued`, a runner sends only an entry it claimed.
   */
  async cancel(session: string, id: string): Promise<QueueEntry> {
    const found = await this.deps.repo.entry(session, id);
    if (found && !found.sending && (await this.deps.repo.cancel(session, id))) {
      await this.deps.committed();
      this.settled(found.entry, { error: new GatewayError('SEND_CANCELLED', `send ${id} was cancelled before it was sent`) });
      this.sleepers.get(session)?.wake();
      return found.entry;
    }
    // claimed before the cancel, or between its look-up and its delete
    if (found?.sending || (found && (await this.deps.repo.entry(session, id))?.sending)) {
      throw new GatewayError('QUEUE_ENTRY_SENDING', `send ${id} is being sent now and can no longer be cancelled`);
    }
    throw notFound('QUEUE_ENTRY_NOT_FOUND', `queued send ${id} of session ${session}`);
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

  /** Reads the session's queue again; a store that cannot answer (PostgreSQL restarting) is asked again a while later. */
  private reloadUntilRead(session: string): void {
    this.reload(session).catch((err: unknown) => {
      if (this.stopped) return;
      this.deps.logger.warn({ err, session }, 'send queue not read; trying again');
      setTimeout(() => this.reloadUntilRead(session), this.deps.retryMs ?? 2000).unref();
    });
  }

  private async reload(session: string): Promise<void> {
    this.retryDelays.delete(session);
    // claims left by a run before a crash (or on a node that no longer runs the session) are sent again by this one
    this.unclaimed.add(session);
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
      .catch((err: unknown) => {
        this.unclaimed.add(session);
        this.deps.logger.error({ err, session }, 'send queue runner failed; retrying');
        return 'retry' as const;
      })
      .then((outcome) => {
        this.runners.delete(session);
        // a session that is not connected here is run again when it connects (session.connected)
        if (this.stopped || outcome === 'elsewhere' || !this.hasWaiting(session)) return;
        // a session that cannot send here is tried again later and later (up to a minute); its connecting reloads it at once
        const delay = Math.min(MAX_RETRY_MS, (this.retryDelays.get(session) ?? (this.deps.retryMs ?? 2000) / 2) * 2);
        this.retryDelays.set(session, delay);
        setTimeout(() => this.kick(session), delay).unref();
      });
    this.runners.set(session, runner);
  }

  /** Sends the session's queue until it is empty; 'elsewhere' when the session is not connected here, 'retry' when it cannot send now. */
  private async run(session: string): Promise<'done' | 'retry' | 'elsewhere'> {
    if (this.unclaimed.delete(session)) await this.deps.repo.unclaimAll(session);
    while (!this.stopped) {
      // checked before any send work (media downloads, link previews): a session that cannot send here does none
      if (!(await this.deps.sendsHere(session))) return 'elsewhere';
      const entry = await this.deps.repo.head(session);
      if (!entry) {
        this.waiting.set(session, 0);
        return 'done';
      }
      const previous = await this.deps.sentBefore(entry);
      if (previous) {
        if (!(await this.deps.repo.claim(session, entry.id))) continue; // cancelled meanwhile
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
      // from here on the entry is this runner's: a cancel now is refused; a cancel that came first made the claim fail
      if (!(await this.deps.repo.claim(session, entry.id))) continue;
      if (!policy.exempt) this.deps.pacer.take(session, entry.chatId, policy);
      try {
        const result = await this.deps.deliver(entry, () => this.deps.repo.completed(entry, Date.now()));
        this.retryDelays.delete(session);
        this.settled(entry, { result });
      } catch (err) {
        const code = err instanceof GatewayError ? err.code : 'INTERNAL';
        if (NOT_NOW.has(code)) {
          await this.deps.repo.unclaim(session, entry.id); // kept at its place; tried again after retryMs
          return 'retry';
        }
        // a refusal (a URL that no longer downloads, a quote gone) will not change: the entry is dropped and its caller told
        if (!(err instanceof GatewayError)) this.deps.logger.error({ err, session, entry: entry.id }, 'queued send failed');
        await this.deps.repo.dropClaimed(session, entry.id);
        this.settled(entry, { error: err });
      }
    }
    return 'done';
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

  /**
   * The entry left the queue: its request or its command.result is told. A first contact that did not go out is counted
   * no more; one WhatsApp refused went out (its message is stored) and keeps counting.
   */
  private settled(entry: QueueEntry, outcome: { result: QueuedResult } | { error: unknown }): void {
    if ('error' in outcome && entry.firstContact && !(outcome.error instanceof MessageRefusedError)) this.deps.dropped?.(entry);
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
