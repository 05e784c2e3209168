// A true sliding-window rate limiter: the timestamps of the last minute's requests per key.
export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(private readonly windowMs = 60_000) {}

  /** Records a hit if under `limit`; otherwise returns the seconds until one slot frees up. */
  hit(key: string, limit: number, now = Date.now()): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const cutoff = now - this.windowMs;
    let list = this.hits.get(key);
    if (!list) this.hits.set(key, (list = []));
    let drop = 0;
    while (drop < list.length && list[drop]! <= cutoff) drop += 1;
    if (drop) list.splice(0, drop);
    if (list.length >= limit) return { allowed: false, retryAfterSeconds: (list[0]! + this.windowMs - now) / 1000 };
    list.push(now);
    return { allowed: true };
  }

  /** Forgets keys whose window is empty (called periodically). */
  sweep(now = Date.now()): void {
    for (const [key, list] of this.hits) if (!list.length || list[list.length - 1]! <= now - this.windowMs) this.hits.delete(key);
  }
}
