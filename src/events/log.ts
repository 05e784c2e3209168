// The event log: numbers each session's events 1, 2, 3 … as they are emitted, records them in the tick that records the
// event (so a number is committed with its event or not at all), and tells readers of each event once its tick has
// committed, in order: a stream never shows an event a crash could take back, so a reader resuming after the last
// number it saw misses nothing and sees nothing twice.
import type { SessionPlacement } from '../cluster/cluster.js';
import type { TickTransaction } from '../store/sql.js';
import type { EventLogRepo } from '../store/event-log.js';
import type { EventPersister } from './bus.js';
import type { GatewayEvent } from './catalogue.js';

export type CommittedListener = (event: GatewayEvent) => void;

/** events of one tick, told once it has committed */
interface Batch {
  tick: number;
  events: GatewayEvent[];
  /** told (or dropped): a later event of the same number of tick starts a batch of its own */
  closed: boolean;
}

export class EventLog {
  private readonly last = new Map<string, number>();
  /** the newest number of each session whose event readers were told (committed: what a new stream starts after) */
  private readonly toldUpTo = new Map<string, number>();
  private readonly listeners = new Set<CommittedListener>();
  private batch: Batch | undefined;
  /** the batches told so far: the next waits for it, so readers hear ticks in the order they committed */
  private told: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: EventLogRepo,
    private readonly tick: Pick<TickTransaction, 'mark' | 'committed'>,
  ) {}

  /** Reads where each session's numbering stands (before the first event). */
  async open(): Promise<void> {
    for (const [session, seq] of await this.repo.lastNumbers()) {
      this.last.set(session, Math.max(seq, this.last.get(session) ?? 0));
      this.toldUpTo.set(session, Math.max(seq, this.toldUpTo.get(session) ?? 0));
    }
  }

  /** Reads again where a session's numbering stands: in a cluster, another node may have numbered its events since. */
  async resume(session: string): Promise<void> {
    this.last.set(session, Math.max(await this.repo.lastNumber(session), this.last.get(session) ?? 0));
  }

  /** the number the session's next event gets */
  next(session: string): number {
    const seq = (this.last.get(session) ?? 0) + 1;
    this.last.set(session, seq);
    return seq;
  }

  /** the newest number given to one of the session's events (0: none yet) */
  lastNumber(session: string): number {
    return this.last.get(session) ?? 0;
  }

  /** the sessions with committed events, and the newest number readers were told of each */
  toldNumbers(): ReadonlyMap<string, number> {
    return this.toldUpTo;
  }

  /** the bus's persister: records the event in the open tick, and tells readers once that tick has committed */
  readonly persist: EventPersister = (event) => {
    // a pairing QR carries the new device's keys (Baileys: its adv secret): it is live only, never written to disk
    const envelope = JSON.stringify(event.event === 'session.qr' ? { ...event, payload: { ...event.payload, qr: null } } : event);
    this.repo.append({ session: event.session, seq: event.seq, event: event.event, at: Date.parse(event.timestamp), envelope });
    this.holdUntilCommitted(event);
  };

  /** an event another node recorded and committed (a cluster's relay): told at once, after what is already waiting */
  relayed(event: GatewayEvent): void {
    if (event.seq > (this.last.get(event.session) ?? 0)) this.last.set(event.session, event.seq);
    this.told = this.told.then(() => this.tell([event]));
  }

  subscribeCommitted(listener: CommittedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A page of the log, up to the newest event readers were told of: a read on the store's connection also sees the open
   * tick's rows, which a lost tick would take back and a restart would number again.
   */
  async page(session: string, after: number, types: readonly string[], limit: number): Promise<string[]> {
    const upTo = this.toldUpTo.get(session) ?? 0;
    if (after >= upTo) return [];
    return this.repo.page(session, after, upTo, types, limit);
  }

  async pruneOlderThan(before: number): Promise<number> {
    return this.repo.pruneOlderThan(before);
  }

  private holdUntilCommitted(event: GatewayEvent): void {
    const tick = this.tick.mark();
    if (this.batch && this.batch.tick === tick && !this.batch.closed) {
      this.batch.events.push(event);
      return;
    }
    const batch: Batch = { tick, events: [event], closed: false };
    this.batch = batch;
    const committed = this.tick.committed() ?? Promise.resolve();
    const close = () => {
      batch.closed = true;
      if (this.batch === batch) this.batch = undefined;
    };
    // a lost tick's events are never told: the store does not have them, so a reader must not have seen them either
    this.told = this.told.then(() =>
      committed.then(
        () => {
          close();
          this.tell(batch.events);
        },
        close,
      ),
    );
  }

  private tell(events: readonly GatewayEvent[]): void {
    for (const event of events) {
      if (event.seq > (this.toldUpTo.get(event.session) ?? 0)) this.toldUpTo.set(event.session, event.seq);
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {
          // a faulty reader must not stop the others
        }
      }
    }
  }
}

/**
 * In a cluster: a node that takes a session reads where its numbering stands before the session starts here, for the
 * node that ran it before numbered its events since this one last heard.
 */
export function numberingAfterClaim(placement: SessionPlacement, log: Pick<EventLog, 'resume'>): SessionPlacement {
  return {
    claim: async (session) => {
      if (!(await placement.claim(session))) return false;
      await log.resume(session);
      return true;
    },
    release: (session) => placement.release(session),
    epochOf: (session) => placement.epochOf(session),
  };
}
