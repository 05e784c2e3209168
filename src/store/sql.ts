// The interface every repository speaks, on either store: statements whose answers are promises, writes staged into the
// tick without a wait, and transactions. SQLite (sqlite-db.ts) answers at once; PostgreSQL (pg-db.ts) answers when the
// server does, and the daemon's thread goes on meanwhile.
export interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

/** A prepared statement. Parameters bind as better-sqlite3 binds them: positional values in order, named ones (`@name`) from one object. */
export interface Statement<Row = unknown> {
  get(...params: unknown[]): Promise<Row | undefined>;
  all(...params: unknown[]): Promise<Row[]>;
  run(...params: unknown[]): Promise<RunResult>;
  /**
   * Sends a write without waiting for its answer. Inside the open tick (join it first) its failure is the tick's: the
   * tick's writes are then all lost and its waiters told. SQLite runs it at once and throws its error here.
   */
  stage(...params: unknown[]): void;
  /** rows become their first column's value */
  pluck(): Statement<any>;
  /** rows become arrays of values */
  raw(): Statement<unknown[]>;
}

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly dialect: Dialect;
  prepare<Row = unknown>(text: string): Statement<Row>;
  /**
   * `fn`'s statements are kept together or not at all (rolled back when it throws). Inside the open tick it is a
   * savepoint of it, and commits with it; otherwise it commits before the promise settles. `fn` must wait only on this
   * store's statements, and must not start another transaction: another transaction waits for it to end, and so does
   * the tick's commit (TransactionTurns). A statement another caller makes while `fn` waits lands in its savepoint, and
   * would go with it if `fn` threw: so a transaction that fails inside a tick rolls the whole tick back (TickAbortedError
   * to everyone waiting on it), and no caller is told its write was kept when it was not.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  /** Runs `fn`'s transactions durably (SQLite: synchronous = FULL for them; PostgreSQL's commits always are). */
  durably<R>(fn: () => Promise<R>): Promise<R>;
  /** Runs a statement without parameters or rows (VACUUM, a pragma-free DDL). */
  exec(text: string): Promise<void>;
  /** a transaction (the tick's or an explicit one) is open on the connection */
  readonly inTransaction: boolean;
  /** the tick transaction of this store, once createTickTransaction made it: explicit transactions join it */
  tick: TickTransaction | undefined;
  close(): Promise<void>;
}

/**
 * Groups the writes of one event-loop tick into one transaction: the first caller in a tick opens it and it
 * commits on the next setImmediate. Many small event writes then cost one commit (SQLite's per-commit work
 * dominates otherwise; PostgreSQL's round trip does); what a crash can lose is the current tick's writes, never half of
 * one, and `committed` lets an answer wait for them. `flush` commits at once, for writes that must not wait (credentials).
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
  /**
   * Runs `write`, writes that must not outlive those made from `mark` on (the Signal keys a stored message's decryption
   * advanced), where they cannot: on SQLite into the open tick (it commits within its flush, so no earlier tick is ever
   * still committing); on PostgreSQL once the ticks under way have committed. Settles once `write`'s own tick is
   * committed; throws or rejects, having written nothing, if a tick from `mark` on was lost.
   */
  writeAfter(mark: number, write: () => Promise<void> | undefined | void): Promise<void> | undefined;
  /** The open tick is rolled back at its end instead of committed, and its waiters are told `err` (nothing when none is open). */
  abort(err: Error): void;
}

/**
 * What the writers of a tick are told when an explicit transaction failed inside it: its savepoint also held what they
 * wrote while it waited, so the whole tick was rolled back. Nothing of theirs was kept; a retry writes it again.
 */
export class TickAbortedError extends Error {
  constructor(cause: unknown) {
    super(`a store transaction failed and this tick's writes were rolled back with it (${(cause as Error)?.message ?? String(cause)}); try again`, { cause });
    this.name = 'TickAbortedError';
  }
}

/** how long a transaction waits for its turn before it gives up (only one started inside another would wait that long) */
const TURN_TIMEOUT_MS = 30_000;

/**
 * Keeps explicit transactions from interleaving: on one connection, a transaction that waits on a statement must not see
 * another begin and end inside it (its savepoint would be released with the other's). Each waits for the ones before it
 * to end. Turns are not re-entrant (knowing who asks would need an AsyncLocalStorage, which slows every promise of the
 * process on Node 20): a transaction's function must not start another one; if one does, the inner one gives up after
 * TURN_TIMEOUT_MS, and the outer one fails and rolls back, rather than both waiting for ever.
 */
export class TransactionTurns {
  private tail: Promise<void> = Promise.resolve();
  private held = 0;
  private readonly idle: Array<() => void> = [];

  /** true while a transaction holds its turn (the tick's commit waits: `whenIdle`) */
  get busy(): boolean {
    return this.held > 0;
  }

  /** Runs `fn` in its turn, after the ones before it. */
  async run<R>(fn: () => Promise<R>): Promise<R> {
    const before = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((done) => (release = done));
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        before,
        new Promise<never>((_, fail) => {
          timer = setTimeout(() => fail(new Error(`a store transaction waited ${TURN_TIMEOUT_MS / 1000} s for its turn: was it started inside another one?`)), TURN_TIMEOUT_MS);
          timer.unref();
        }),
      ]);
    } catch (err) {
      // its place in the line is given up once the ones before it have ended
      void before.then(release);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    this.held++;
    try {
      return await fn();
    } finally {
      this.held--;
      release();
      if (this.held === 0) for (const waiter of this.idle.splice(0)) waiter();
    }
  }

  /** Calls `fn` at once when no transaction holds its turn, else as soon as none does. */
  whenIdle(fn: () => void): void {
    if (this.held === 0) fn();
    else this.idle.push(fn);
  }
}

/**
 * An explicit transaction's course on either store: in its turn; as a savepoint of the tick (joined first, when the store
 * has one); and, when no tick was open, committed with its tick before it settles, so that what it wrote is durable once
 * its caller goes on. `body` opens and closes its own savepoint (or BEGIN/COMMIT without a tick).
 */
export async function runTransaction<R>(db: Db, turns: TransactionTurns, body: () => Promise<R>): Promise<R> {
  let outside = false;
  let commit: Promise<void> | undefined;
  try {
    return await turns.run(async () => {
      outside = !db.inTransaction;
      if (outside) db.tick?.join();
      try {
        return await body();
      } catch (err) {
        // its savepoint is undone, and with it whatever others wrote into the tick meanwhile: the tick goes too, before
        // its turn ends (the tick's commit waits for it)
        db.tick?.abort(new TickAbortedError(err));
        throw err;
      } finally {
        if (outside) commit = db.tick?.committed();
      }
    });
  } catch (err) {
    // the tick it opened ends now (rolled back: its failure aborted it), and its waiters are told
    commit?.catch(() => {});
    if (outside) db.tick?.flush();
    throw err;
  } finally {
    if (commit && outside) {
      db.tick!.flush();
      await commit;
    }
  }
}
