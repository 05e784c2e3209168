// Writes made often with the same key (every message received tells its sender again): one made for a key within the
// window is skipped. Kept in memory, per process; a row removed meanwhile (a logout, a session deleted) comes back at
// the first write after the window.

const MAX_KEYS = 100_000;

export class RecentWrites {
  private readonly lastAt = new Map<string, number>();

  constructor(private readonly windowMs = 60_000) {}

  /** true when `key` was not written within the window (and counts it written `at`) */
  due(key: string, at = Date.now()): boolean {
    const last = this.lastAt.get(key);
    if (last !== undefined && at - last < this.windowMs) return false;
    if (this.lastAt.size >= MAX_KEYS) this.lastAt.clear();
    this.lastAt.set(key, at);
    return true;
  }

  forget(): void {
    this.lastAt.clear();
  }
}
