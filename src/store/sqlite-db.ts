// The embedded store behind the async interface (sql.ts): better-sqlite3 answers at once, so every promise here is
// already settled when it is returned, and a request's statements between two awaits still land in the same tick.
import type Database from 'better-sqlite3';
import { runTransaction, TransactionTurns, type Db, type RunResult, type Statement, type TickTransaction } from './sql.js';

/** `fn`'s answer as a promise already settled: its throw a rejection, as PostgreSQL's statements fail */
function settled<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

class SqliteStatement<Row> implements Statement<Row> {
  constructor(private readonly statement: Database.Statement) {}

  get(...params: unknown[]): Promise<Row | undefined> {
    return settled(() => this.statement.get(...params) as Row | undefined);
  }

  all(...params: unknown[]): Promise<Row[]> {
    return settled(() => this.statement.all(...params) as Row[]);
  }

  run(...params: unknown[]): Promise<RunResult> {
    return settled(() => {
      const result = this.statement.run(...params);
      return { changes: result.changes, lastInsertRowid: Number(result.lastInsertRowid) };
    });
  }

  stage(...params: unknown[]): void {
    this.statement.run(...params);
  }

  pluck(): Statement<any> {
    return new SqliteStatement(this.statement.pluck());
  }

  raw(): Statement<unknown[]> {
    return new SqliteStatement(this.statement.raw());
  }
}

export class SqliteDb implements Db {
  readonly dialect = 'sqlite';
  readonly turns = new TransactionTurns();
  tick: TickTransaction | undefined;
  private savepoints = 0;
  private durableWrites = 0;
  private fullSync = false;

  /** `sqlite`: the better-sqlite3 handle, for what only SQLite has (pragmas, backups, checkpoints, migrations) */
  constructor(readonly sqlite: Database.Database) {}

  prepare<Row = unknown>(text: string): Statement<Row> {
    return new SqliteStatement<Row>(this.sqlite.prepare(text));
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args: A) =>
      runTransaction(this, this.turns, async () => {
        const raw = this.sqlite;
        const savepoint = raw.inTransaction ? `tx_${++this.savepoints}` : undefined;
        raw.exec(savepoint ? `SAVEPOINT ${savepoint}` : 'BEGIN');
        let result: R;
        try {
          result = await fn(...args);
        } catch (err) {
          // SQLite may have rolled the transaction back itself (a full disk): then there is nothing left to undo
          if (raw.inTransaction) raw.exec(savepoint ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : 'ROLLBACK');
          throw err;
        }
        raw.exec(savepoint ? `RELEASE ${savepoint}` : 'COMMIT');
        return result;
      });
  }

  /**
   * The level cannot change inside a transaction: FULL is set before `fn` (which must begin with no transaction open), and
   * NORMAL again once the last durable write has ended and no transaction is open (a tick opened meanwhile commits with
   * FULL, which costs it a little time and nothing else).
   */
  async durably<R>(fn: () => Promise<R>): Promise<R> {
    if (this.durableWrites++ === 0 && !this.fullSync) {
      this.sqlite.pragma('synchronous = FULL');
      this.fullSync = true;
    }
    try {
      return await fn();
    } finally {
      this.durableWrites--;
      this.backToNormal();
    }
  }

  private backToNormal(): void {
    if (this.durableWrites > 0 || !this.fullSync || !this.sqlite.open) return;
    if (this.sqlite.inTransaction) return void setImmediate(() => this.backToNormal());
    this.sqlite.pragma('synchronous = NORMAL');
    this.fullSync = false;
  }

  exec(text: string): Promise<void> {
    return settled(() => void this.sqlite.exec(text));
  }

  get inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  async close(): Promise<void> {
    if (this.sqlite.open) this.sqlite.close();
  }
}
