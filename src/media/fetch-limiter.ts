// Bounds the daemon's concurrent URL-media downloads: a few run, a few wait, the rest are told to come back later.
// (Each download may hold up to its byte limit in memory; without a bound, small requests add up to gigabytes.)
import { ServerBusyError } from '../errors.js';

const RETRY_AFTER_SECONDS = 5;

export class FetchLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.queue) {
        throw new ServerBusyError(`too many media downloads from URLs in progress (${this.concurrency} running, ${this.queue} waiting); retry later`, RETRY_AFTER_SECONDS);
      }
      // the slot is handed over by the finishing download, so `active` stays counted
      await new Promise<void>((resume) => this.waiting.push(resume));
    } else {
      this.active += 1;
    }
    try {
      return await work();
    } finally {
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
