// Opens the SQLite database (WAL, foreign keys, file mode 0600) and applies the numbered migrations in order.
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations/index.js';
import { refuseNewerSchema } from './database-file.js';
import { isPostgres, type PostgresDatabase } from './postgres-bridge.js';
import { createPgTickTransaction } from './postgres-tick.js';
import { TickLedger } from './tick-ledger.js';

export type Db = Database.Database;

/** Opens (creating it when absent) and migrates to the latest schema; throws SchemaTooNewError, touching nothing, on a newer one. */
export function openDatabase(file: string): Db {
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
  return db;
}

/** Applies the migrations not yet applied, each in its own transaction, up to `upTo` (tests build older schemas with it). */
export function migrate(db: Db, upTo = Number.POSITIVE_INFINITY): void {
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
 * Groups the writes of one event-loop tick into one transaction: the first caller in a tick opens it and it
 * commits on the next setImmediate. Many small event writes then cost one commit (SQLite's per-commit work
 * dominates otherwise); what a crash can lose is the current tick's writes, never half of one, and `committed`
 * lets an answer wait for them. `flush` commits at once, for writes that must not wait (credentials).
 */
export interface TickTransaction {
  join(): void;
  flush(): void;
  /** settles once the writes made so far are committed (rejects if they are lost); undefined when none are waiting */
  committed(): Promise<void> | undefined;
  /** where a request starts: the writes it makes from now on are in this tick or a later one */
  mark(): number;
  /**
   * Settles once the writes made so far are committed (undefined when none are waiting), and throws or rejects if any
   * tick from `mark` on was lost: a request that wrote, then waited on something else while its tick committed (or
   * failed) and another opened, is not answered 2xx.
   */
  committedSince(mark: number): Promise<void> | undefined;
}

/**
 * @param onLost told when a tick's writes could not be committed (they are rolled back; the daemon goes on)
 * @param onCommit told how long each commit took, seconds (metrics)
 */
export function createTickTransaction(db: Db, onLost: (err: unknown) => void, onCommit?: (seconds: number) => void): TickTransaction {
  if (isPostgres(db)) return createPgTickTransaction(db as unknown as PostgresDatabase, onLost, onCommit);
  let open = false;
  let waiting: Array<{ done(): void; fail(err: unknown): void }> = [];
  const ledger = new TickLedger();
  const flush = () => {
    if (!open) return;
    open = false;
    const settled = waiting;
    waiting = [];
    const failure = commit();
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
    if (!db.inTransaction) return new Error("the tick's transaction was rolled back by SQLite after an earlier error");
    try {
      const started = performance.now();
      db.exec('COMMIT');
      onCommit?.((performance.now() - started) / 1000);
      return undefined;
    } catch (err) {
      // a failed COMMIT can leave the transaction open; later ticks must not write into it
      try {
        if (db.inTransaction) db.exec('ROLLBACK');
      } catch {
        // the COMMIT's error is the one to report
      }
      return err;
    }
  };
  function committed(): Promise<void> | undefined {
    if (!open) return undefined;
    return new Promise<void>((done, fail) => waiting.push({ done, fail }));
  }
  return {
    join() {
      if (open || db.inTransaction) return;
      db.exec('BEGIN');
      open = true;
      ledger.opened += 1;
      setImmediate(flush);
    },
    flush,
    committed,
    mark: () => ledger.mark(open),
    committedSince: (mark) => ledger.committedSince(mark, committed()),
  };
}
