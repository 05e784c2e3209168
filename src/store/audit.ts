// Repository of the audit log: one row per admin action (a refusal repeated by one caller: one row with a count),
// listed newest first with filters, pruned by age.
import { ACTOR_KINDS, type ActorKind, type AuditAction } from '../audit/actions.js';
import type { Db, Statement } from './db.js';

export interface NewAuditEntry {
  /** ms since the epoch */
  at: number;
  actorKind: ActorKind;
  actorId: string | null;
  actorName: string | null;
  action: AuditAction;
  target: string | null;
  requestId: string | null;
  outcome: 'succeeded' | 'failed';
  status: number | null;
  errorCode: string | null;
  /** non-secret particulars, as JSON */
  details: string | null;
}

export interface AuditRow extends NewAuditEntry {
  id: number;
  /** how many times it happened: above 1 for a refusal repeated within one coalescing window */
  repeats: number;
  /** ms since the epoch of the last repeat; null when it happened once */
  lastAt: number | null;
}

export interface AuditFilter {
  action?: string;
  /** `master`, `key`, `client`, `system`, or an actor id (API key id, client token id) */
  actor?: string;
  target?: string;
  outcome?: 'succeeded' | 'failed';
  /** ms since the epoch, inclusive */
  since?: number;
  until?: number;
}

interface RawAudit {
  id: number;
  at: number;
  actor_kind: ActorKind;
  actor_id: string | null;
  actor_name: string | null;
  action: AuditAction;
  target: string | null;
  request_id: string | null;
  outcome: 'succeeded' | 'failed';
  status: number | null;
  error_code: string | null;
  details: string | null;
  repeats: number;
  last_at: number | null;
}

const toRow = (r: RawAudit): AuditRow => ({
  id: r.id,
  at: r.at,
  actorKind: r.actor_kind,
  actorId: r.actor_id,
  actorName: r.actor_name,
  action: r.action,
  target: r.target,
  requestId: r.request_id,
  outcome: r.outcome,
  status: r.status,
  errorCode: r.error_code,
  details: r.details,
  repeats: Number(r.repeats),
  lastAt: r.last_at === null ? null : Number(r.last_at),
});

const ACTOR_KIND_VALUES: ReadonlySet<string> = new Set(ACTOR_KINDS);

/** The WHERE clause of a filter, with its parameters in order. */
function whereOf(filter: AuditFilter): { sql: string; params: Array<string | number> } {
  const clauses: string[] = [];
  const params: Array<string | number> = [];
  const add = (clause: string, value: string | number | undefined) => {
    if (value === undefined) return;
    clauses.push(clause);
    params.push(value);
  };
  add('action = ?', filter.action);
  if (filter.actor !== undefined) add(ACTOR_KIND_VALUES.has(filter.actor) ? 'actor_kind = ?' : 'actor_id = ?', filter.actor);
  add('target = ?', filter.target);
  add('outcome = ?', filter.outcome);
  add('at >= ?', filter.since);
  add('at <= ?', filter.until);
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;

export function createAuditRepo(db: Db) {
  const insert = db.prepare(
    `INSERT INTO audit_log (at, actor_kind, actor_id, actor_name, action, target, request_id, outcome, status, error_code, details)
     VALUES (@at, @actorKind, @actorId, @actorName, @action, @target, @requestId, @outcome, @status, @errorCode, @details)`,
  );
  // PostgreSQL gives the new row's id only when asked for it
  const insertReturningId = db.prepare(
    `INSERT INTO audit_log (at, actor_kind, actor_id, actor_name, action, target, request_id, outcome, status, error_code, details)
     VALUES (@at, @actorKind, @actorId, @actorName, @action, @target, @requestId, @outcome, @status, @errorCode, @details)${db.dialect === 'postgres' ? ' RETURNING id' : ''}`,
  );
  const addRepeats = db.prepare('UPDATE audit_log SET repeats = repeats + ?, last_at = ? WHERE id = ?');
  const prune = db.prepare('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? LIMIT 5000)');
  /** a statement per filter shape (at most 64), prepared on first use */
  const statements = new Map<string, { page: Statement; count: Statement<number> }>();

  return {
    /** Stages the entry into the tick (the caller joined it). */
    insert(entry: NewAuditEntry): void {
      insert.stage(entry);
    },
    /** Inserts and returns the new entry's id (used for the first of a run of repeats, which later count into it). */
    insertReturningId: async (entry: NewAuditEntry): Promise<number> => Number((await insertReturningId.run(entry)).lastInsertRowid),
    /** `count` more repeats of an entry, the last at `lastAt` (ms); staged into the tick (the caller joined it). */
    addRepeats: (id: number, count: number, lastAt: number): void => addRepeats.stage(count, lastAt, id),
    /** Newest first. */
    async list(filter: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditRow[]; total: number }> {
      const { sql, params } = whereOf(filter);
      let prepared = statements.get(sql);
      if (!prepared) {
        prepared = {
          page: db.prepare(`SELECT * FROM audit_log ${sql} ORDER BY id DESC LIMIT ? OFFSET ?`),
          count: db.prepare(`SELECT COUNT(*) FROM audit_log ${sql}`).pluck(),
        };
        statements.set(sql, prepared);
      }
      const [raws, total] = await Promise.all([prepared.page.all(...params, limit, offset), prepared.count.get(...params)]);
      return { rows: (raws as RawAudit[]).map(toRow), total: total as number };
    },
    /** Deletes entries older than `before` (ms), in batches; returns how many went. */
    async pruneOlderThan(before: number): Promise<number> {
      let total = 0;
      for (;;) {
        const removed = (await prune.run(before)).changes;
        total += removed;
        if (removed < 5000) return total;
      }
    },
  };
}
