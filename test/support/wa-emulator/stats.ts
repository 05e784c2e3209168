// Load figures for benchmarks: WebSocket connection attempts over time (to see a reconnect storm), connections open,
// and how many messages the virtual phones decrypted.
/** attempts remembered for the sliding-window peak; older ones only count in the total */
const KEPT_ATTEMPTS = 100_000;

export interface EmulatorStats {
  /** WebSocket upgrades since the emulator started (or since `since`, when given) */
  connectionAttempts: number;
  /** the most upgrades in any 1,000 ms window (since `since`, when given) */
  peakAttemptsPerSecond: number;
  connectionsOpen: number;
  /** companions logged in and past their offline flush */
  devicesActive: number;
  /** messages the virtual phones decrypted from other accounts, in total (own companions' copies not counted) */
  phoneMessages: number;
}

export class ConnectionStats {
  /** upgrade times (ms since the epoch), oldest first */
  private attempts: number[] = [];
  private total = 0;
  open = 0;

  attempted(at = Date.now()): void {
    this.total += 1;
    this.attempts.push(at);
    if (this.attempts.length > KEPT_ATTEMPTS * 2) this.attempts = this.attempts.slice(-KEPT_ATTEMPTS);
  }

  attemptsSince(since = 0): number {
    if (since <= 0) return this.total;
    return this.attempts.length - this.firstAtOrAfter(since);
  }

  /** The most attempts in any window [t, t + 1000 ms) that starts at or after `since`. */
  peakPerSecond(since = 0): number {
    let peak = 0;
    const from = this.firstAtOrAfter(since);
    for (let start = from, end = from; end < this.attempts.length; end += 1) {
      while (this.attempts[end]! - this.attempts[start]! >= 1000) start += 1;
      peak = Math.max(peak, end - start + 1);
    }
    return peak;
  }

  private firstAtOrAfter(since: number): number {
    let lo = 0;
    let hi = this.attempts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.attempts[mid]! < since) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
