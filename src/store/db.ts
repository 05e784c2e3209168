// Opens the SQLite database (WAL, foreign keys, file mode 0600), applies the numbered migrations in order, and makes the
// tick transaction of either store.
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations/index.js';
import { refuseNewerSchema } from './database-file.js';
import { createPgTickTransaction } from './pg-tick.js';
import { PgDb } from './pg-db.js';
import { SqliteDb } from './sqlite-db.js';
import type { Db, TickTransaction } from './sql.js';
import { TickLedger } from './tick-ledger.js';

export type { Db, Statement, TickTransaction } from './sql.js';
export { SqliteDb } from './sqlite-db.js';

/** Opens (creating it when absent) and migrates to the latest schema; throws SchemaTooNewError, touching nothing, on a newer one. */
export function openDatabase(file: string): SqliteDb {
  if (file !== ':memory:') {
    refuseNewerSchema(file);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
    chmodSync(file, 0o600);
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // a 16 MB page cache keeps the message indexes' hot pages in memory during bursts
  db.pragma('cache_size = -16384');
  db.pragma('temp_store = MEMORY');
  migrate(db);
  return new SqliteDb(db);
}

/** Applies the migrations not yet applied, each in its own transaction, up to `upTo` (tests build older schemas with it). */
export function migrate(db: Database.Database, upTo = Number.POSITIVE_INFINITY): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version) || migration.version > upTo) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    })();
  }
}

/**
 * Makes the store's tick transaction (TickTransaction, sql.ts) and attaches it to `db`: its explicit transactions join it.
 * @param onLost told when a tick's writes could not be committed (they are rolled back; the daemon goes on)
 * @param onCommit told how long each commit took, seconds (metrics)
 */
export function createTickTransaction(db: Db, onLost: (err: unknown) => void, onCommit?: (seconds: number) => void): TickTransaction {
  const tick = db instanceof PgDb ? createPgTickTransaction(db, onLost, onCommit) : createSqliteTick(db as SqliteDb, onLost, onCommit);
  db.tick = tick;
  return tick;
}

function createSqliteTick(db: SqliteDb, onLost: (err: unknown) => void, onCommit?: (seconds: number) => void): TickTransaction {
  const raw = db.sqlite;
  let open = false;
  let waiting: Array<{ done(): void; fail(err: unknown): void }> = [];
  const ledger = new TickLedger();
  /** why the open tick must be rolled back instead of committed (abort) */
  let aborted: Error | undefined;
  const flush = () => {
    if (!open) return;
    // an explicit transaction under way is a savepoint of this tick: the tick commits once it has ended
    if (db.turns.busy) return db.turns.whenIdle(flush);
    open = false;
    const settled = waiting;
    waiting = [];
    const failure = aborted ? rollback(aborted) : commit();
    aborted = undefined;
    if (failure !== undefined) ledger.recordLost(ledger.opened, failure);
    for (const waiter of settled) {
      if (failure === undefined) waiter.done();
      else waiter.fail(failure);
    }
    if (failure !== undefined) onLost(failure);
  };
  /** COMMIT, or the reason the tick's writes are gone */
  const commit = (): unknown => {
    // SQLite rolls a transaction back by itself after some errors (a full disk, I/O): nothing is left to commit
    if (!raw.inTransaction) return new Error("the tick's transaction was rolled back by SQLite after an earlier error");
    try {
      const started = performance.now();
      raw.exec('COMMIT');
      onCommit?.((performance.now() - started) / 1000);
      return undefined;
    } catch (err) {
      // a failed COMMIT can leave the transaction open; later ticks must not write into it
      return rollback(err);
    }
  };
  /** ROLLBACK of what is left open; returns `cause`, the error to report (a failing ROLLBACK's own is not) */
  const rollback = (cause: unknown): unknown => {
    try {
      if (raw.inTransaction) raw.exec('ROLLBACK');
    } catch {
      // SQLite ends the transaction anyway once its connection closes
    }
    return cause;
  };
  function committed(): Promise<void> | undefined {
    if (!open) return undefined;
    return new Promise<void>((done, fail) => waiting.push({ done, fail }));
  }
  return {
    join() {
      if (open || raw.inTransaction) return;
      raw.exec('BEGIN');
      open = true;
      ledger.opened += 1;
      setImmediate(flush);
    },
    flush,
    committed,
    mark: () => ledger.mark(open),
    committedSince: (mark) => ledger.committedSince(mark, committed()),
    // a SQLite tick commits within its flush: no earlier one is ever still committing
    writeAfter: (mark, write) => ledger.writeAfter(mark, undefined, write, committed),
    abort(err) {
      if (open) aborted ??= err;
    },
  };
}
