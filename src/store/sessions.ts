// Repository of session rows: identity, engine, reported status, account details, proxy and config.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { contextOf } from './sealed-columns.js';
import type { LogoutReason } from '../engine/logouts.js';
import type { AccountInfo, CloseCause, CloseCauseCode, EngineName, SessionStatus, StatusReason } from '../engine/types.js';

/** Why the session's connection last went down, and when (ISO 8601); `logoutReason` is derived from `code` (not stored). */
export interface LastError extends CloseCause {
  at: string;
  logoutReason?: LogoutReason;
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
  /** when its account was paired (ms; 0: before the gateway recorded it); null: not paired */
  pairedAt: number | null;
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
  paired_at: number | string | null;
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
  pairedAt: r.paired_at === null || r.paired_at === undefined ? null : Number(r.paired_at),
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

type StatusCount = { engine: EngineName; status: SessionStatus; statusReason: StatusReason | null; count: number };

/**
 * How long a node keeps a session row it read (a cluster). Another node's write of it is seen that much later at most;
 * a request's checks of its session (four of them for a send) cost one round trip, and a busy session's many requests
 * share their reads. Every write of a running session is made on the node that runs it, which drops its copy at once.
 */
const SHARED_READ_MS = 250;

/**
 * `shared`: other daemons write the same rows (a cluster): a row is kept SHARED_READ_MS only.
 * The status, account and should-run setters are staged into the tick (joined here): hot paths and the engine's
 * connection hooks call them without waiting.
 */
export function createSessionsRepo(db: Db, box: SecretBox, options: { shared?: boolean } = {}) {
  const toRow = (r: RawRow) => toRowWith(box, r);
  const insert = db.prepare(
    `INSERT INTO sessions (name, engine, proxy, config, created_at, updated_at) VALUES (@name, @engine, @proxy, @config, @now, @now)`,
  );
  const byName = db.prepare<RawRow>('SELECT * FROM sessions WHERE name = ?');
  const all = db.prepare<RawRow>('SELECT * FROM sessions ORDER BY created_at, name');
  const page = db.prepare<RawRow>('SELECT * FROM sessions ORDER BY created_at, name LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT COUNT(*) FROM sessions').pluck();
  const countConnected = db.prepare("SELECT COUNT(*) FROM sessions WHERE status = 'CONNECTED'").pluck();
  const byStatus = db.prepare<{ status: string; count: number }>('SELECT status, COUNT(*) AS count FROM sessions GROUP BY status');
  const unwell = db.prepare<RawRow>(
    "SELECT * FROM sessions WHERE status = 'CONNECTING' OR (status = 'DISCONNECTED' AND status_reason IN ('FAILED', 'TEMPORARY_BAN')) ORDER BY updated_at LIMIT ?",
  );
  const countByState = db.prepare<StatusCount>('SELECT engine, status, status_reason AS "statusReason", COUNT(*) AS count FROM sessions GROUP BY engine, status, status_reason');
  const countShouldRun = db.prepare('SELECT COUNT(*) FROM sessions WHERE should_run = 1').pluck();
  const toRestore = db.prepare<RawRow>('SELECT * FROM sessions WHERE should_run = 1 ORDER BY created_at, name');
  const setStatus = db.prepare('UPDATE sessions SET status = ?, status_reason = ?, updated_at = ? WHERE name = ?');
  const setShouldRun = db.prepare('UPDATE sessions SET should_run = ?, updated_at = ? WHERE name = ?');
  const setAccount = db.prepare(
    `UPDATE sessions SET phone_number = @phoneNumber, push_name = @pushName, business_name = @businessName,
       platform = @platform, lid = @lid, updated_at = @now,
       paired_at = CASE WHEN @paired = 1 THEN COALESCE(paired_at, @nowMs) ELSE NULL END WHERE name = @name`,
  );
  const setConfig = db.prepare('UPDATE sessions SET config = ?, updated_at = ? WHERE name = ?');
  const setLastError = db.prepare('UPDATE sessions SET last_error_code = ?, last_error_message = ?, last_error_at = ? WHERE name = ?');
  const remove = db.prepare('DELETE FROM sessions WHERE name = ?');
  // a cluster's lease of the session goes with it (a later session of that name starts with none)
  const removeLease = db.prepare('DELETE FROM session_leases WHERE session = ?');
  const removeWithLease = db.transaction(async (name: string) => {
    await removeLease.run(name);
    return (await remove.run(name)).changes > 0;
  });
  const shared = options.shared === true;
  /** one daemon: rows read on every request (status checks, account), kept, and dropped on each write */
  const cache = new Map<string, SessionRow>();
  /** a cluster: the rows read in the last SHARED_READ_MS, dropped then and on each write made here */
  const memo = new Map<string, Promise<SessionRow | undefined>>();
  /** counts the writes: a read that a write overtook must not be kept (it may predate the write) */
  let writes = 0;
  /** the totals every health check and metrics scrape reads: counted once, again after a write that can change them */
  let totals: { total: number; connected: number } | undefined;
  const wrote = (name: string, countsChange: boolean) => {
    writes += 1;
    cache.delete(name);
    memo.delete(name);
    if (countsChange) totals = undefined;
  };
  /** a staged write: in the tick (joined here, so that its failure is the tick's), never awaited */
  const staged = (name: string, countsChange: boolean, write: () => void) => {
    db.tick?.join();
    write();
    wrote(name, countsChange);
  };
  const counted = async () => {
    if (totals) return totals;
    const before = writes;
    const counts = { total: (await count.get()) as number, connected: (await countConnected.get()) as number };
    if (!shared && writes === before) totals = counts;
    return counts;
  };
  const read = async (name: string): Promise<SessionRow | undefined> => {
    const before = writes;
    const raw = await byName.get(name);
    if (!raw) return undefined;
    const row = toRow(raw);
    if (!shared && writes === before) cache.set(name, row);
    return row;
  };

  return {
    /** The new row (not read back: the insert may sit in a tick a read elsewhere does not see yet). */
    async insert(session: NewSession): Promise<SessionRow> {
      const now = new Date().toISOString();
      await insert.run({ ...session, proxy: session.proxy === undefined ? null : box.seal(session.proxy, PROXY_CONTEXT), config: JSON.stringify(session.config), now });
      wrote(session.name, true);
      return {
        name: session.name,
        engine: session.engine,
        status: 'DISCONNECTED',
        statusReason: null,
        shouldRun: false,
        phoneNumber: null,
        pushName: null,
        businessName: null,
        platform: null,
        lid: null,
        pairedAt: null,
        proxy: session.proxy ?? null,
        config: JSON.parse(JSON.stringify(session.config)) as Record<string, unknown>,
        lastError: null,
        createdAt: now,
        updatedAt: now,
      };
    },
    get(name: string): Promise<SessionRow | undefined> {
      const cached = cache.get(name);
      if (cached) return Promise.resolve(cached);
      if (!shared) return read(name);
      let pending = memo.get(name);
      if (!pending) {
        pending = read(name);
        memo.set(name, pending);
        // a failed read is not kept for the rest of the turn
        pending.catch(() => {
          if (memo.get(name) === pending) memo.delete(name);
        });
        setTimeout(() => {
          if (memo.get(name) === pending) memo.delete(name);
        }, SHARED_READ_MS).unref();
      }
      return pending;
    },
    async list(limit?: number, offset = 0): Promise<SessionRow[]> {
      const rows = await (limit === undefined ? all.all() : page.all(limit, offset));
      return rows.map(toRow);
    },
    count: async (): Promise<number> => (await counted()).total,
    counts: async (): Promise<{ total: number; connected: number }> => ({ ...(await counted()) }),
    countByStatus: async (): Promise<Record<string, number>> => Object.fromEntries((await byStatus.all()).map((r) => [r.status, r.count])),
    /** Sessions that may need the operator: connecting (for how long is the caller's call), or down after FAILED or TEMPORARY_BAN. Oldest first. */
    listUnwell: async (limit: number): Promise<SessionRow[]> => (await unwell.all(limit)).map(toRow),
    /** how many sessions each engine has in each status and status reason */
    countByState: (): Promise<StatusCount[]> => countByState.all(),
    countShouldRun: async (): Promise<number> => (await countShouldRun.get()) as number,
    listToRestore: async (): Promise<SessionRow[]> => (await toRestore.all()).map(toRow),
    setStatus(name: string, status: SessionStatus, reason: StatusReason | null): void {
      staged(name, true, () => setStatus.stage(status, reason, new Date().toISOString(), name));
    },
    setShouldRun(name: string, shouldRun: boolean): void {
      staged(name, false, () => setShouldRun.stage(shouldRun ? 1 : 0, new Date().toISOString(), name));
    },
    setAccount(name: string, account: AccountInfo | null): void {
      staged(name, false, () =>
        setAccount.stage({
          name,
          phoneNumber: account?.phoneNumber ?? null,
          pushName: account?.pushName ?? null,
          businessName: account?.businessName ?? null,
          platform: account?.platform ?? null,
          lid: account?.lid ?? null,
          paired: account ? 1 : 0,
          nowMs: Date.now(),
          now: new Date().toISOString(),
        }),
      );
    },
    /** Replaces the session's config; false when there is no such session. */
    async setConfig(name: string, config: Record<string, unknown>): Promise<boolean> {
      const changed = (await setConfig.run(JSON.stringify(config), new Date().toISOString(), name)).changes > 0;
      wrote(name, false);
      return changed;
    },
    setLastError(name: string, cause: CloseCause, at = new Date().toISOString()): void {
      staged(name, false, () => setLastError.stage(cause.code, cause.message, at, name));
    },
    async delete(name: string): Promise<boolean> {
      wrote(name, true);
      const removed = await removeWithLease(name);
      wrote(name, true);
      return removed;
    },
  };
}
