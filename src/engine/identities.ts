// The phone-number ↔ LID pairs a session knows, for both engines: bounded (the least recently learnt or seen go first)
// and written through to the session's IdentityStore in batches, so that they survive restarts.
import { phoneOfJid } from './jid.js';
import type { IdentityPair, IdentitySource, IdentityStore } from './types.js';

/** A pair learnt for the first time, or changed: what the engine reports as `contact.identity`. */
export interface IdentityChange {
  /** the phone JID and the LID, bare */
  pn: string;
  lid: string;
  /** the LID the number had before (a changed pair) */
  previousLid?: string;
  /** the number the LID named before (a changed pair) */
  previousPn?: string;
  source: IdentitySource;
}

export const MAX_IDENTITIES = 50_000;
/** a pair seen again is written again (its use refreshed in the store) at most this often */
const REFRESH_WRITE_MS = 60 * 60_000;

export class IdentityPairs {
  /** in least-recently-used order: a pair learnt or seen again moves to the end */
  private readonly lidByPn = new Map<string, { lid: string; writtenAt: number }>();
  private readonly pnByLid = new Map<string, string>();
  /** what to write: pn → its LID, with the source when the pair is new or changed */
  private pending = new Map<string, { lid: string; source?: IdentitySource }>();
  private evicted: string[] = [];
  private flushScheduled = false;
  /** told of every pair learnt for the first time or changed (not of pairs loaded from the store, nor of pairs seen again) */
  onChange: ((change: IdentityChange) => void) | undefined;

  /** `known`: what `store` held when the session was made (IdentityPairs.open loads it) */
  constructor(
    private readonly store?: IdentityStore,
    known: readonly IdentityPair[] = [],
    private readonly onWriteError: (err: unknown) => void = () => {},
    private readonly max = MAX_IDENTITIES,
  ) {
    const now = Date.now();
    for (const { pn, lid } of known) this.put(pn, lid, now);
    if (this.evicted.length) this.scheduleFlush();
  }

  /** The pairs `store` holds, loaded, and the ones learnt from now on written to it. */
  static async open(store: IdentityStore, onWriteError?: (err: unknown) => void, max?: number): Promise<IdentityPairs> {
    return new IdentityPairs(store, await store.load(), onWriteError, max);
  }

  get size(): number {
    return this.lidByPn.size;
  }

  /** Records that the phone JID `pn` and `lid` are the same person (both bare), learnt from `source`. */
  set(pn: string, lid: string, source: IdentitySource = 'message'): void {
    const now = Date.now();
    const known = this.lidByPn.get(pn);
    if (known?.lid === lid) {
      this.lidByPn.delete(pn);
      this.lidByPn.set(pn, known);
      if (now - known.writtenAt < REFRESH_WRITE_MS) return;
      known.writtenAt = now;
      // a refresh keeps the origin of a pair still waiting to be written
      if (!this.pending.has(pn)) this.pending.set(pn, { lid });
    } else {
      const previousPn = this.pnByLid.get(lid);
      this.put(pn, lid, now);
      this.pending.set(pn, { lid, source });
      this.onChange?.({ pn, lid, ...(known ? { previousLid: known.lid } : {}), ...(previousPn !== undefined && previousPn !== pn ? { previousPn } : {}), source });
    }
    this.scheduleFlush();
  }

  lidOf(pn: string): string | undefined {
    return this.lidByPn.get(pn)?.lid;
  }

  pnOf(lid: string): string | undefined {
    return this.pnByLid.get(lid);
  }

  /** Writes what was learnt since the last write (otherwise done on the next turn of the event loop). */
  flush(): void {
    this.flushScheduled = false;
    if (!this.store || (!this.pending.size && !this.evicted.length)) return;
    const pairs = [...this.pending].map(([pn, { lid, source }]) => ({ pn, lid, ...(source ? { source } : {}) }));
    const evicted = this.evicted;
    this.pending = new Map();
    this.evicted = [];
    try {
      this.store.save(pairs, evicted);
    } catch (err) {
      // the session was deleted, or the store closed at shutdown: the pairs stay in memory
      this.onWriteError(err);
    }
  }

  private put(pn: string, lid: string, now: number): void {
    const old = this.lidByPn.get(pn);
    if (old) {
      this.pnByLid.delete(old.lid);
      this.lidByPn.delete(pn);
    }
    // a LID names one number: the pair it was in before is gone
    const previousPn = this.pnByLid.get(lid);
    if (previousPn !== undefined) this.lidByPn.delete(previousPn);
    this.lidByPn.set(pn, { lid, writtenAt: now });
    this.pnByLid.set(lid, pn);
    while (this.lidByPn.size > this.max) {
      const [oldest, entry] = this.lidByPn.entries().next().value!;
      this.lidByPn.delete(oldest);
      this.pnByLid.delete(entry.lid);
      this.pending.delete(oldest);
      this.evicted.push(oldest);
    }
  }

  private scheduleFlush(): void {
    if (!this.store || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }
}

/** The `contact.identity` payload of a change: the pair (phone JID, E.164 number, LID), where it was learnt, and what it replaced. */
export function identityEventPayload(change: IdentityChange): Record<string, unknown> {
  return {
    jid: change.pn,
    phoneNumber: phoneOfJid(change.pn) ?? null,
    lid: change.lid,
    source: change.source,
    ...(change.previousLid ? { previousLid: change.previousLid } : {}),
    ...(change.previousPn ? { previousPhoneNumber: phoneOfJid(change.previousPn) ?? null } : {}),
    timestamp: new Date().toISOString(),
  };
}
