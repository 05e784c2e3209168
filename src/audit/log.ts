// The audit log service: records admin actions (never a secret: callers hand over only ids, names and field names),
// lists them for GET /api/admin/audit, and prunes entries older than audit.retentionDays.
import type { Principal } from '../auth/scopes.js';
import type { Logger } from '../logger.js';
import type { AuditFilter, AuditRepo } from '../store/audit.js';
import type { AuditAction, AuditActor } from './actions.js';

const DAY_MS = 86_400_000;
const PRUNE_INTERVAL_MS = 3_600_000;

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
}

/** The actor of a request's principal: the master key, an API key (id and name), or a client token (its id and ephemeral id). */
export function actorOf(principal: Principal): AuditActor {
  if (principal.kind === 'master') return { kind: 'master' };
  if (principal.kind === 'key') return { kind: 'key', id: principal.id, name: principal.name };
  return { kind: 'client', id: principal.tokenId, name: principal.ephemeralId };
}

export class AuditLog {
  private pruneTimer: NodeJS.Timeout | undefined;

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
  record(entry: AuditRecord): void {
    try {
      this.deps.beginWrite();
      this.deps.repo.insert({
        at: Date.now(),
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
      });
    } catch (err) {
      this.deps.logger.error({ err, action: entry.action, requestId: entry.requestId }, 'could not write an audit log entry');
    }
  }

  list(filter: AuditFilter, limit: number, offset: number): { rows: AuditEntryView[]; total: number } {
    const { rows, total } = this.deps.repo.list(filter, limit, offset);
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
      })),
    };
  }

  /** Deletes entries older than audit.retentionDays; returns how many went. */
  prune(now = Date.now()): number {
    const removed = this.deps.repo.pruneOlderThan(now - this.deps.retentionDays * DAY_MS);
    if (removed) this.deps.logger.info({ removed }, 'pruned old audit log entries');
    return removed;
  }

  /** Prunes now and every hour until closed. */
  start(): void {
    this.safePrune();
    this.pruneTimer = setInterval(() => this.safePrune(), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  close(): void {
    clearInterval(this.pruneTimer);
  }

  private safePrune(): void {
    try {
      this.prune();
    } catch (err) {
      this.deps.logger.error({ err }, 'could not prune the audit log');
    }
  }
}
