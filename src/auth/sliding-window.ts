// A true sliding-window rate limiter: the timestamps of the last window's requests per key. Expired timestamps are
// skipped by moving a head index and compacted now and then, so a hit costs O(1) amortised even for large limits.
interface Window {
  times: number[];
  /** index of the oldest timestamp still in the window */
  head: number;
}

export class SlidingWindowLimiter {
  private readonly hits = new Map<string, Window>();

  constructor(private readonly windowMs = 60_000) {}

  /** Records a hit if under `limit`; otherwise returns the seconds until enough hits slide out for one more. */
  hit(key: string, limit: number, now = Date.now()): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const cutoff = now - this.windowMs;
    let window = this.hits.get(key);
    if (!window) this.hits.set(key, (window = { times: [], head: 0 }));
    const { times } = window;
    let head = window.head;
    while (head < times.length && times[head]! <= cutoff) head += 1;
    if (head >= 64 && head * 2 >= times.length) {
      times.splice(0, head);
      head = 0;
    }
    window.head = head;
    const count = times.length - head;
    if (count >= limit) {
      // with a limit lowered below what is in the window, more than the oldest hit must slide out
      const freeing = times[head + Math.max(0, count - limit)] ?? now;
      return { allowed: false, retryAfterSeconds: (freeing + this.windowMs - now) / 1000 };
    }
    times.push(now);
    return { allowed: true };
  }

  /** Forgets keys whose window is empty (called periodically). */
  sweep(now = Date.now()): void {
    for (const [key, { times, head }] of this.hits) {
      if (head >= times.length || times[times.length - 1]! <= now - this.windowMs) this.hits.delete(key);
    }
  }
}
