// Repository of session rows: identity, engine, reported status, account details, proxy and config.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { contextOf } from './sealed-columns.js';
import type { AccountInfo, CloseCause, CloseCauseCode, EngineName, SessionStatus, StatusReason } from '../engine/types.js';

/** Why the session's connection last went down, and when (ISO 8601). */
export interface LastError extends CloseCause {
  at: string;
}

export interface SessionRow {
  name: string;
  engine: EngineName;
  status: SessionStatus;
  statusReason: StatusReason | null;
  shouldRun: boolean;
  phoneNumber: string | null;
  pushName: string | null;
  businessName: string | null;
  platform: 'smba' | 'consumer' | null;
  lid: string | null;
  proxy: string | null;
  config: Record<string, unknown>;
  lastError: LastError | null;
  createdAt: string;
  updatedAt: string;
}

interface RawRow {
  name: string;
  engine: EngineName;
  status: SessionStatus;
  status_reason: StatusReason | null;
  should_run: number;
  phone_number: string | null;
  push_name: string | null;
  business_name: string | null;
  platform: 'smba' | 'consumer' | null;
  lid: string | null;
  proxy: string | null;
  config: string;
  last_error_code: CloseCauseCode | null;
  last_error_message: string | null;
  last_error_at: string | null;
  created_at: string;
  updated_at: string;
}

const PROXY_CONTEXT = contextOf('sessions', 'proxy');

const toRowWith = (box: SecretBox, r: RawRow): SessionRow => ({
  name: r.name,
  engine: r.engine,
  status: r.status,
  statusReason: r.status_reason,
  shouldRun: r.should_run === 1,
  phoneNumber: r.phone_number,
  pushName: r.push_name,
  businessName: r.business_name,
  platform: r.platform,
  lid: r.lid,
  proxy: r.proxy === null ? null : box.open(r.proxy, PROXY_CONTEXT),
  config: JSON.parse(r.config) as Record<string, unknown>,
  lastError: r.last_error_code ? { code: r.last_error_code, message: r.last_error_message ?? '', at: r.last_error_at ?? r.updated_at } : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface NewSession {
  name: string;
  engine: EngineName;
  proxy?: string;
  config: Record<string, unknown>;
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;

/** `shared`: other daemons write the same rows (a cluster), so nothing is cached here */
export function createSessionsRepo(db: Db, box: SecretBox, options: { shared?: boolean } = {}) {
  const toRow = (r: RawRow) => toRowWith(box, r);
  const insert = db.prepare(
    `INSERT INTO sessions (name, engine, proxy, config, created_at, updated_at) VALUES (@name, @engine, @proxy, @config, @now, @now)`,
  );
  const byName = db.prepare('SELECT * FROM sessions WHERE name = ?');
  const all = db.prepare('SELECT * FROM sessions ORDER BY created_at, name');
  const page = db.prepare('SELECT * FROM sessions ORDER BY created_at, name LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT COUNT(*) FROM sessions').pluck();
  const countConnected = db.prepare("SELECT COUNT(*) FROM sessions WHERE status = 'CONNECTED'").pluck();
  const byStatus = db.prepare('SELECT status, COUNT(*) AS count FROM sessions GROUP BY status');
  const unwell = db.prepare(
    "SELECT * FROM sessions WHERE status = 'CONNECTING' OR (status = 'DISCONNECTED' AND status_reason IN ('FAILED', 'TEMPORARY_BAN')) ORDER BY updated_at LIMIT ?",
  );
  const countByState = db.prepare('SELECT engine, status, status_reason AS "statusReason", COUNT(*) AS count FROM sessions GROUP BY engine, status, status_reason');
  const countShouldRun = db.prepare('SELECT COUNT(*) FROM sessions WHERE should_run = 1').pluck();
  const toRestore = db.prepare('SELECT * FROM sessions WHERE should_run = 1 ORDER BY created_at, name');
  const setStatus = db.prepare('UPDATE sessions SET status = ?, status_reason = ?, updated_at = ? WHERE name = ?');
  const setShouldRun = db.prepare('UPDATE sessions SET should_run = ?, updated_at = ? WHERE name = ?');
  const setAccount = db.prepare(
    `UPDATE sessions SET phone_number = @phoneNumber, push_name = @pushName, business_name = @businessName,
       platform = @platform, lid = @lid, updated_at = @now WHERE name = @name`,
  );
  const setLastError = db.prepare('UPDATE sessions SET last_error_code = ?, last_error_message = ?, last_error_at = ? WHERE name = ?');
  const remove = db.prepare('DELETE FROM sessions WHERE name = ?');
  // a cluster's lease of the session goes with it (a later session of that name starts with none)
  const removeLease = db.prepare('DELETE FROM session_leases WHERE session = ?');
  const removeWithLease = db.transaction((name: string) => {
    removeLease.run(name);
    return remove.run(name).changes > 0;
  });
  /** rows read on every request (status checks, account): cached, and dropped on each write */
  const cache = new Map<string, SessionRow>();
  /** the totals every health check and metrics scrape reads: counted once, again after a write that can change them */
  let totals: { total: number; connected: number } | undefined;
  const counted = () => {
    const counts = totals ?? { total: count.get() as number, connected: countConnected.get() as number };
    if (!options.shared) totals = counts;
    return counts;
  };

  return {
    insert(session: NewSession): SessionRow {
      insert.run({ ...session, proxy: session.proxy === undefined ? null : box.seal(session.proxy, PROXY_CONTEXT), config: JSON.stringify(session.config), now: new Date().toISOString() });
      cache.delete(session.name);
      totals = undefined;
      return this.get(session.name)!;
    },
    get(name: string): SessionRow | undefined {
      const cached = cache.get(name);
      if (cached) return cached;
      const raw = byName.get(name) as RawRow | undefined;
      if (!raw) return undefined;
      const row = toRow(raw);
      if (!options.shared) cache.set(name, row);
      return row;
    },
    list(limit?: number, offset = 0): SessionRow[] {
      const rows = (limit === undefined ? all.all() : page.all(limit, offset)) as RawRow[];
      return rows.map(toRow);
    },
    count: () => counted().total,
    counts: (): { total: number; connected: number } => ({ ...counted() }),
    countByStatus: (): Record<string, number> => Object.fromEntries((byStatus.all() as Array<{ status: string; count: number }>).map((r) => [r.status, r.count])),
    /** Sessions that may need the operator: connecting (for how long is the caller's call), or down after FAILED or TEMPORARY_BAN. Oldest first. */
    listUnwell: (limit: number): SessionRow[] => (unwell.all(limit) as RawRow[]).map(toRow),
    /** how many sessions each engine has in each status and status reason */
    countByState: () => countByState.all() as Array<{ engine: EngineName; status: SessionStatus; statusReason: StatusReason | null; count: number }>,
    countShouldRun: () => countShouldRun.get() as number,
    listToRestore: () => (toRestore.all() as RawRow[]).map(toRow),
    setStatus(name: string, status: SessionStatus, reason: StatusReason | null): void {
      setStatus.run(status, reason, new Date().toISOString(), name);
      cache.delete(name);
      totals = undefined;
    },
    setShouldRun(name: string, shouldRun: boolean): void {
      setShouldRun.run(shouldRun ? 1 : 0, new Date().toISOString(), name);
      cache.delete(name);
    },
    setAccount(name: string, account: AccountInfo | null): void {
      setAccount.run({
        name,
        phoneNumber: account?.phoneNumber ?? null,
        pushName: account?.pushName ?? null,
        businessName: account?.businessName ?? null,
        platform: account?.platform ?? null,
        lid: account?.lid ?? null,
        now: new Date().toISOString(),
      });
      cache.delete(name);
    },
    setLastError(name: string, cause: CloseCause, at = new Date().toISOString()): void {
      setLastError.run(cause.code, cause.message, at, name);
      cache.delete(name);
    },
    delete(name: string): boolean {
      cache.delete(name);
      totals = undefined;
      return removeWithLease(name);
    },
  };
}
