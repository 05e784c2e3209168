// Fan-out of events to many webhooks, in bounded steps: when one tick's events would need more delivery rows than a
// tick may write (a burst of messages to 100 webhooks), each further event is recorded once with its webhooks (the
// fanouts table, in the event's own transaction), and its delivery rows are written from there a chunk per turn of the
// event loop, oldest first, so the daemon goes on answering meanwhile. Nothing is lost on a crash: a chunk's rows and
// what is left of its fan-outs commit together, and what is left is expanded again at the next start.
import type { Logger } from '../logger.js';
import type { Fanout, FanoutsRepo, NewFanout } from '../store/fanouts.js';
import type { NewDelivery } from '../store/outbox.js';
import { deliveryId, envelopeJson } from './outbox.js';

/** delivery rows written per turn of the event loop */
const CHUNK_ROWS = 250;
/** how often the store is checked for fan-outs this daemon did not record (another node's, one that stopped) */
const RESCAN_MS = 5000;

export interface FanoutDeps {
  fanouts: FanoutsRepo;
  /** joins the tick's transaction: a chunk commits with it */
  beginWrite: () => void;
  /** told of the rows just written (the dispatcher wakes and takes them) */
  onWritten: (deliveries: readonly NewDelivery[]) => void;
  logger: Logger;
  chunkRows?: number;
}

export class FanoutExpander {
  /** whether fan-outs may wait in the store: later events queue behind them, so that each webhook's stay in order */
  private backlog = false;
  private scheduled = false;
  private stopped = false;
  private rescan: NodeJS.Timeout | undefined;
  /** a look for fan-outs or a chunk is under way (each waits on the store) */
  private busy = false;
  /** fan-outs recorded so far: a chunk that found none does not end the backlog if one was recorded meanwhile */
  private added = 0;

  constructor(private readonly deps: FanoutDeps) {}

  /** Expands what an earlier run left, and checks now and then for what other nodes left. */
  start(): void {
    this.rescan = setInterval(() => this.resume(), RESCAN_MS).unref();
    this.resume();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.rescan);
  }

  /** whether events are being fanned out from the store (a new one queues behind them) */
  get waiting(): boolean {
    return this.backlog;
  }

  /** Records an event for its webhooks, inside the caller's transaction; its deliveries follow in later turns. */
  add(fanout: NewFanout, now = Date.now()): void {
    this.deps.fanouts.add(fanout, now);
    this.added += 1;
    this.backlog = true;
    this.schedule();
  }

  private resume(): void {
    if (this.backlog || this.stopped || this.busy) return;
    this.busy = true;
    this.deps.fanouts.any().then(
      (any) => {
        this.busy = false;
        if (!any || this.backlog) return;
        this.backlog = true;
        this.schedule();
      },
      (err: unknown) => {
        this.busy = false;
        this.deps.logger.warn({ err }, 'could not look for fan-outs to expand; trying again later');
      },
    );
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => void this.step());
  }

  private async step(): Promise<void> {
    this.scheduled = false;
    if (this.stopped) return;
    // one chunk at a time: the next is scheduled once this one is written
    if (this.busy) return this.schedule();
    this.busy = true;
    const addedBefore = this.added;
    let written: NewDelivery[];
    let fanouts: number;
    try {
      this.deps.beginWrite();
      ({ written, fanouts } = await this.deps.fanouts.expand(this.deps.chunkRows ?? CHUNK_ROWS, buildDelivery));
    } catch (err) {
      // the store is away: the rescan takes it up again
      this.deps.logger.warn({ err }, 'could not expand fan-outs into deliveries; trying again later');
      this.backlog = false;
      return;
    } finally {
      this.busy = false;
    }
    if (fanouts === 0) {
      if (this.added === addedBefore) this.backlog = false;
      else this.schedule();
      return;
    }
    if (written.length) this.deps.onWritten(written);
    this.schedule();
  }
}

function buildDelivery(fanout: Fanout, webhookId: number): NewDelivery {
  const id = deliveryId(fanout.createdAt);
  return {
    id,
    webhookId,
    eventId: fanout.eventId,
    event: fanout.event,
    session: fanout.session,
    body: envelopeJson(id, { event: fanout.event, session: fanout.session, seq: Number(fanout.seq), timestamp: fanout.timestamp }, fanout.payload),
  };
}
