// A small in-memory TTL cache with Baileys' CacheStore shape; one set per session, kept across reconnects.
import type { CacheStore } from '@whiskeysockets/baileys';

export class TtlCache implements CacheStore {
  private readonly entries = new Map<string, { value: unknown; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set<T>(key: string, value: T): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  del(key: string): void {
    this.entries.delete(key);
  }

  flushAll(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The caches Baileys takes per socket; a session hands the same ones to every socket it creates. */
export interface SessionCaches {
  msgRetryCounterCache: TtlCache;
  userDevicesCache: TtlCache;
  callOfferCache: TtlCache;
  placeholderResendCache: TtlCache;
}

export function sessionCaches(): SessionCaches {
  return {
    msgRetryCounterCache: new TtlCache(60 * 60_000),
    userDevicesCache: new TtlCache(5 * 60_000),
    callOfferCache: new TtlCache(5 * 60_000, 1_000),
    placeholderResendCache: new TtlCache(60 * 60_000, 1_000),
  };
}
