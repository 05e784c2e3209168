// The audit log service: records admin actions (never a secret: callers hand over only ids, names and field names),
// lists them for GET /api/admin/audit, and prunes entries older than audit.retentionDays. Refused calls are bounded: a
// caller repeating one refusal within a minute raises the count of one entry, and a caller adds at most
// REFUSAL_ENTRIES_PER_MINUTE new refusal entries a minute (a client looping on a refused call wrote 31,684 rows in 10 s).
import type { Principal } from '../auth/scopes.js';
import { SlidingWindowLimiter } from '../auth/sliding-window.js';
import type { Logger } from '../logger.js';
import type { AuditFilter, AuditRepo, NewAuditEntry } from '../store/audit.js';
import type { AuditAction, AuditActor } from './actions.js';

const DAY_MS = 86_400_000;
const PRUNE_INTERVAL_MS = 3_600_000;
/** repeats of one refusal (caller, action, reason) within this time from its first are counted in its entry */
export const REFUSAL_WINDOW_MS = 60_000;
/** new refusal entries one caller may add a minute; past it refusals are counted in the daemon's log only */
export const REFUSAL_ENTRIES_PER_MINUTE = 30;
/** how often repeats counted in memory are written to their entries (and on every read of the log) */
const REPEATS_FLUSH_MS = 5_000;

/** A refusal entry still taking repeats. */
interface OpenRefusal {
  /** undefined while the entry's insert has not answered with it (PostgreSQL): repeats wait in `unwritten` */
  id: number | undefined;
  firstAt: number;
  lastAt: number;
  /** repeats counted since the entry was last written */
  unwritten: number;
}

export interface AuditRecord {
  actor: AuditActor;
  action: AuditAction;
  /** what was acted on: a session name, webhook id, key id; null when the action has none (settings) */
  target?: string | null;
  requestId?: string;
  outcome: 'succeeded' | 'failed';
  /** the HTTP status answered, for actions taken through the API */
  status?: number;
  /** the error code of a failed action */
  errorCode?: string;
  /** particulars that are not secret (a key's name and scopes, the names of the fields an update changed) */
  details?: Record<string, unknown>;
}

/** An entry as GET /api/admin/audit answers it. */
export interface AuditEntryView {
  id: number;
  at: string;
  actor: AuditActor;
  action: AuditAction;
  target: string | null;
  requestId: string | null;
  outcome: 'succeeded' | 'failed';
  status: number | null;
  errorCode?: string;
  details?: Record<string, unknown>;
  /** how many times it happened (a refusal repeated within a minute is one entry); `at` is the first, `lastAt` the last */
  count: number;
  lastAt?: string;
}

/** The actor of a request's principal: the master key, an API key (id and name), or a client token (its id and ephemeral id). */
export function actorOf(principal: Principal): AuditActor {
  if (principal.kind === 'master') return { kind: 'master' };
  if (principal.kind === 'key') return { kind: 'key', id: principal.id, name: principal.name };
  return { kind: 'client', id: principal.tokenId, name: principal.ephemeralId };
}

export class AuditLog {
  private pruneTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** by caller, action, outcome and reason */
  private readonly openRefusals = new Map<string, OpenRefusal>();
  /** new refusal entries per caller */
  private readonly refusalEntries = new SlidingWindowLimiter(60_000);
  /** refusals per caller not recorded since the last flush (over REFUSAL_ENTRIES_PER_MINUTE) */
  private readonly unrecorded = new Map<string, number>();
  /** inserts of refusal entries whose id has not come back yet (read waits for them, so its counts are whole) */
  private readonly pendingIds = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      repo: AuditRepo;
      /** joins the tick's transaction: an entry commits with the action's own writes */
      beginWrite: () => void;
      retentionDays: number;
      logger: Logger;
    },
  ) {}

  /** Records one action; a failure to write is logged, never thrown at the action that already happened. */
  record(entry: AuditRecord, now = Date.now()): void {
    try {
      if (entry.outcome === 'failed') this.recordRefusal(entry, now);
      else {
        this.deps.beginWrite();
        this.deps.repo.insert(this.newEntry(entry, now));
      }
    } catch (err) {
      this.deps.logger.error({ err, action: entry.action, requestId: entry.requestId }, 'could not write an audit log entry');
    }
  }

  /** A repeat of an open refusal is counted; a new one gets an entry while its caller is within its allowance. */
  private recordRefusal(entry: AuditRecord, now: number): void {
    const caller = `${entry.actor.kind}:${entry.actor.id ?? ''}`;
    const key = `${caller}\u0000${entry.action}\u0000${entry.errorCode ?? entry.status ?? ''}`;
    const open = this.openRefusals.get(key);
    if (open && now - open.firstAt < REFUSAL_WINDOW_MS) {
      open.unwritten += 1;
      open.lastAt = now;
      return;
    }
    if (open) {
      this.openRefusals.delete(key);
      this.writeRepeats(open);
    }
    if (!this.refusalEntries.hit(caller, REFUSAL_ENTRIES_PER_MINUTE, now).allowed) {
      this.unrecorded.set(caller, (this.unrecorded.get(caller) ?? 0) + 1);
      return;
    }
    this.deps.beginWrite();
    const opened: OpenRefusal = { id: undefined, firstAt: now, lastAt: now, unwritten: 0 };
    this.openRefusals.set(key, opened);
    // the id comes back with the insert (at once on SQLite, a round trip on PostgreSQL); repeats counted meanwhile
    // are written once it is known, always after the entry itself
    const known: Promise<void> = this.deps.repo.insertReturningId(this.newEntry(entry, now)).then(
      (id) => {
        opened.id = id;
        this.pendingIds.delete(known);
        if (this.openRefusals.get(key) !== opened) this.writeRepeatsLogged(opened);
      },
      (err: unknown) => {
        this.pendingIds.delete(known);
        if (this.openRefusals.get(key) === opened) this.openRefusals.delete(key);
        this.deps.logger.error({ err, action: entry.action, requestId: entry.requestId }, 'could not write an audit log entry');
      },
    );
    this.pendingIds.add(known);
  }

  private writeRepeatsLogged(open: OpenRefusal): void {
    try {
      this.writeRepeats(open);
    } catch (err) {
      this.deps.logger.error({ err }, 'could not write the repeats of refused calls to the audit log');
    }
  }

  /** Stages the repeats counted since the entry was written; while its id is not known, they wait (see recordRefusal). */
  private writeRepeats(open: OpenRefusal): void {
    if (open.unwritten === 0 || open.id === undefined) return;
    this.deps.beginWrite();
    this.deps.repo.addRepeats(open.id, open.unwritten, open.lastAt);
    open.unwritten = 0;
  }

  /** Writes the repeats counted in memory, closes the refusal entries whose window is over, logs what was not recorded. */
  flush(now = Date.now()): void {
    try {
      for (const [key, open] of this.openRefusals) {
        this.writeRepeats(open);
        if (now - open.firstAt >= REFUSAL_WINDOW_MS) this.openRefusals.delete(key);
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'could not write the repeats of refused calls to the audit log');
    }
    for (const [caller, count] of this.unrecorded) {
      this.deps.logger.warn({ caller, count }, `refused calls not recorded in the audit log: over ${REFUSAL_ENTRIES_PER_MINUTE} new refusal entries a minute from one caller`);
    }
    this.unrecorded.clear();
    this.refusalEntries.sweep(now);
  }

  private newEntry(entry: AuditRecord, at: number): NewAuditEntry {
    return {
      at,
      actorKind: entry.actor.kind,
      actorId: entry.actor.id ?? null,
      actorName: entry.actor.name ?? null,
      action: entry.action,
      target: entry.target ?? null,
      requestId: entry.requestId ?? null,
      outcome: entry.outcome,
      status: entry.status ?? null,
      errorCode: entry.errorCode ?? null,
      details: entry.details && Object.keys(entry.details).length ? JSON.stringify(entry.details) : null,
    };
  }

  async list(filter: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditEntryView[]; total: number }> {
    // the counts read are those of every refusal so far
    if (this.pendingIds.size) await Promise.all(this.pendingIds);
    this.flush();
    const { rows, total } = await this.deps.repo.list(filter, limit, offset);
    return {
      total,
      rows: rows.map((r) => ({
        id: r.id,
        at: new Date(r.at).toISOString(),
        actor: { kind: r.actorKind, ...(r.actorId !== null ? { id: r.actorId } : {}), ...(r.actorName !== null ? { name: r.actorName } : {}) },
        action: r.action,
        target: r.target,
        requestId: r.requestId,
        outcome: r.outcome,
        status: r.status,
        ...(r.errorCode !== null ? { errorCode: r.errorCode } : {}),
        ...(r.details !== null ? { details: JSON.parse(r.details) as Record<string, unknown> } : {}),
        count: r.repeats,
        ...(r.lastAt !== null ? { lastAt: new Date(r.lastAt).toISOString() } : {}),
      })),
    };
  }

  /** Deletes entries older than audit.retentionDays; returns how many went. */
  async prune(now = Date.now()): Promise<number> {
    const removed = await this.deps.repo.pruneOlderThan(now - this.deps.retentionDays * DAY_MS);
    if (removed) this.deps.logger.info({ removed }, 'pruned old audit log entries');
    return removed;
  }

  /** Prunes now and every hour until closed. */
  start(): void {
    this.safePrune();
    this.pruneTimer = setInterval(() => this.safePrune(), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
    this.flushTimer = setInterval(() => this.flush(), REPEATS_FLUSH_MS);
    this.flushTimer.unref();
  }

  close(): void {
    clearInterval(this.pruneTimer);
    clearInterval(this.flushTimer);
    this.flush();
  }

  private safePrune(): void {
    this.prune().catch((err: unknown) => this.deps.logger.error({ err }, 'could not prune the audit log'));
  }
}
