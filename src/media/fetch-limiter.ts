// Bounds the daemon's concurrent URL-media downloads: a few run, a few wait, the rest are told to come back later.
// (Each download may hold up to its byte limit in memory; without a bound, small requests add up to gigabytes.) The
// places (running and waiting) are shared under quotas (src/quota.ts): one caller holds at most its share, and the last
// places are the master key's, whose downloads also wait at the head of the queue.
import type { Principal } from '../auth/scopes.js';
import { ServerBusyError } from '../errors.js';
import { QuotaCounter } from '../quota.js';

const RETRY_AFTER_SECONDS = 5;
/** places of the pool only the master key may take */
export const FETCH_MASTER_RESERVE = 2;

export class FetchLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly places: QuotaCounter;

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
    perPrincipal = Infinity,
  ) {
    this.places = new QuotaCounter({ max: concurrency + queue, perPrincipal, masterReserve: FETCH_MASTER_RESERVE }, 'URL downloads');
  }

  /** Runs `work` as one download of `holder` (the caller; undefined for the daemon's own), or refuses with 503. */
  async run<T>(work: () => Promise<T>, holder?: Principal): Promise<T> {
    const refusal = this.places.refusal(holder);
    if (refusal) throw new ServerBusyError(`${refusal} (${this.concurrency} run at once, ${this.queue} may wait); retry later`, RETRY_AFTER_SECONDS);
    const release = this.places.take(holder);
    try {
      if (this.active >= this.concurrency) {
        // the slot is handed over by the finishing download, so `active` stays counted
        await new Promise<void>((resume) => (holder?.kind === 'master' ? this.waiting.unshift(resume) : this.waiting.push(resume)));
      } else {
        this.active += 1;
      }
      return await work();
    } finally {
      release();
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

/** A byte budget: reserve before holding bytes, release when done; a reservation that does not fit is refused. */
export class ByteBudget {
  private used = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly what: string,
  ) {}

  reserve(bytes: number): () => void {
    if (this.used > 0 && this.used + bytes > this.maxBytes) {
      throw new ServerBusyError(`${this.what} hold too much memory right now (budget ${this.maxBytes} bytes); retry later`, RETRY_AFTER_SECONDS);
    }
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
    };
  }
}
