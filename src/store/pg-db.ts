// PostgreSQL behind the store's interface (sql.ts), in the daemon's own thread: every statement goes down one connection
// in the order it was made, pipelined (sent before the ones ahead of it have answered), and nothing waits for an answer
// but the promise that needs it. So a read made after a write sees it, a tick's writes and its commit cost one round trip,
// and the event loop runs on while the server works: a route that never touches the store answers at once.
import type postgres from 'postgres';
import { connectPostgres, migratePostgres, type PgSql } from './postgres.js';
import { PostgresError } from './pg-errors.js';
import { runTransaction, TransactionTurns, type Db, type RunResult, type Statement, type TickTransaction } from './sql.js';

/**
 * A transaction is opened with a savepoint that only its own connection has, and committed by releasing it in the same
 * query as the COMMIT: on a new connection (the transaction's was lost, and its writes with it) the release fails and the
 * COMMIT is not run, where a bare COMMIT would only warn that no transaction is open and report success. The ROLLBACK
 * sent right behind it ends a transaction whose COMMIT did not run (a no-op after one that did), so the next tick,
 * pipelined behind it, never begins inside a failed one.
 */
const BEGIN = 'BEGIN; SAVEPOINT transaction_connection';
const COMMIT = 'RELEASE SAVEPOINT transaction_connection; COMMIT';
/** what a statement of a transaction whose connection was lost reports (SQLSTATE class 08: the store is unreachable) */
const CONNECTION_LOST = { message: 'the connection to PostgreSQL was lost before the transaction committed; none of its writes was kept', code: '08003' };
/** a savepoint or COMMIT on a connection without the transaction: the transaction's connection was lost */
const LOST_CODES = new Set(['25P01', '3B001']);
/** how long statements are refused at once after one failed to reach the server */
const UNREACHABLE_PAUSE_MS = 1000;
/** how much longer an answer may take for each statement sent ahead of it */
const QUEUED_STATEMENT_MS = 1;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are the repositories' to type
type Query = postgres.PendingQuery<any>;
type Result = postgres.RowList<postgres.Row[]>;

/** the transaction and its savepoints, outermost first: the first error seen inside each, and its statements still unanswered */
interface Level {
  /** why it must roll back: a statement's failure (PostgresError), or the tick's abort (TickAbortedError) */
  error?: Error;
  pending: Array<Promise<unknown>>;
  /** its reads under way: a read that fails is undone before anything ends the transaction (guardedRead) */
  reads: Array<Promise<unknown>>;
  /** its statements and reads not answered yet */
  unanswered: number;
}

/** `?` and `@name` (also `:name`, `$name`) outside quotes become `$1…`; a name keeps its number. Returns the slots in order. */
export function numberParameters(text: string): { text: string; slots: Array<number | string> } {
  const slots: Array<number | string> = [];
  let positional = 0;
  const numbered = text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\?(\d*)|(?<![:\w])[@:$]([A-Za-z_]\w*)/g, (match, digits: string | undefined, name: string | undefined) => {
    if (match.startsWith("'") || match.startsWith('"')) return match;
    if (name === undefined) {
      slots.push(digits ? Number(digits) - 1 : positional++);
      return `$${slots.length}`;
    }
    const at = slots.indexOf(name);
    if (at >= 0) return `$${at + 1}`;
    slots.push(name);
    return `$${slots.length}`;
  });
  return { text: numbered, slots };
}

/**
 * PostgreSQL's text cannot hold U+0000, which SQLite's can: it is stored as U+FFFD (a text from WhatsApp keeps the rest,
 * and a name looked up with it finds nothing, as no stored name has it). undefined binds as NULL, as on SQLite.
 */
const toWire = (value: unknown) => (value === undefined ? null : typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value);

const isNamed = (arg: unknown) => typeof arg === 'object' && arg !== null && !Buffer.isBuffer(arg) && !(arg instanceof Uint8Array) && !Array.isArray(arg);

/** `answer`, counted among `level`'s unanswered statements (from when it is made, not sent) until it settles */
function counted<T>(level: Level | undefined, answer: Promise<T>): Promise<T> {
  if (!level) return answer;
  level.unanswered++;
  const settled = () => void level.unanswered--;
  answer.then(settled, settled);
  return answer;
}

class PgStatement<Row> implements Statement<Row> {
  private readonly text: string;
  private readonly slots: Array<number | string>;

  constructor(
    private readonly db: PgDb,
    source: string | { text: string; slots: Array<number | string> },
    private readonly shape: 'rows' | 'pluck' | 'raw' = 'rows',
  ) {
    ({ text: this.text, slots: this.slots } = typeof source === 'string' ? numberParameters(source) : source);
  }

  async get(...params: unknown[]): Promise<Row | undefined> {
    return (await this.all(...params))[0];
  }

  async all(...params: unknown[]): Promise<Row[]> {
    const rows = await this.db.read(this.text, this.bind(params), this.shape !== 'rows');
    return (this.shape === 'pluck' ? rows.map((row) => (row as unknown[])[0]) : [...rows]) as Row[];
  }

  async run(...params: unknown[]): Promise<RunResult> {
    const result = await this.db.write(this.text, this.bind(params));
    const first = result[0] as { id?: unknown } | undefined;
    return { changes: result.count ?? 0, lastInsertRowid: Number(first?.id ?? 0) };
  }

  stage(...params: unknown[]): void {
    this.db.stage(this.text, this.bind(params));
  }

  pluck(): Statement<any> {
    return new PgStatement(this.db, { text: this.text, slots: this.slots }, 'pluck');
  }

  raw(): Statement<unknown[]> {
    return new PgStatement(this.db, { text: this.text, slots: this.slots }, 'raw');
  }

  /** better-sqlite3's binding: positional values in order, named ones from the (one) object among the arguments */
  private bind(args: unknown[]): unknown[] {
    const positional = args.filter((arg) => !isNamed(arg));
    const named = args.find(isNamed) as Record<string, unknown> | undefined;
    return this.slots.map((slot) => {
      if (typeof slot === 'number') return toWire(positional[slot]);
      if (!named || !(slot in named)) throw new RangeError(`missing named parameter "${slot}"`);
      return toWire(named[slot]);
    });
  }
}

/** every store open in this process, for the guard against postgres.js's own throws (guardAgainstClientThrows) */
const openStores = new Set<PgDb>();

/**
 * postgres.js can throw out of its own socket callbacks when a connection drops at a bad moment (seen during `pg_ctl
 * restart`: "Cannot read properties of null (reading 'write')"), which would end the daemon. Such an error is taken for
 * what it is, a lost connection: the transactions open on it fail, the daemon goes on. Any other uncaught error still
 * ends the process as Node would.
 */
function guardAgainstClientThrows(): void {
  if (process.listeners('uncaughtException').includes(onClientThrow)) return;
  process.on('uncaughtException', onClientThrow);
}

function onClientThrow(err: unknown): void {
  const stack = (err as Error)?.stack ?? '';
  if (openStores.size > 0 && unheardClientQuery(err)) return;
  if (openStores.size > 0 && /[\\/]node_modules[\\/]postgres[\\/]/.test(stack)) {
    for (const store of openStores) store.clientThrew(err);
    return;
  }
  process.removeListener('uncaughtException', onClientThrow);
  // as Node would: the error on stderr, exit code 1 (rethrowing from here would only reach this handler again)
  process.stderr.write(`${stack || String(err)}\n`);
  process.exit(1);
}

/**
 * The rejection of postgres.js's own query that nobody hears: it looks up the array types as each connection opens and
 * drops that promise, so a connection lost at that moment (a server restarting) rejects it unhandled, which would end
 * the daemon. postgres.js gives an error it rejects queries with the text of the first query it rejected with it. The
 * statements that were waiting for that connection are told by postgres.js itself: nothing more to do. (Not
 * `fetch_types: false`: the leases bind JS arrays as text[] and bigint[], which needs those types.)
 */
function unheardClientQuery(err: unknown): boolean {
  return err instanceof Error && Object.hasOwn(err, 'query') && /\bfrom pg_catalog\.pg_type a\b/.test(String((err as { query?: unknown }).query));
}

export class PgDb implements Db {
  readonly dialect = 'postgres';
  readonly turns = new TransactionTurns();
  tick: TickTransaction | undefined;
  /** told when the connection the store's statements run on was lost (a transaction open on it failed) */
  onConnectionLost: ((err: unknown) => void) | undefined;
  private readonly sql: PgSql;
  /** the cluster's connections (leases, LISTEN): never behind the main connection's queue */
  private sideSql: PgSql | undefined;
  private readonly levels: Level[] = [];
  /** each step starts once the one before it has been sent (a blocking one: once it is answered) */
  private queue: Promise<void> = Promise.resolve();
  /** the open transaction's queries not yet answered (cancelled when its connection is lost) */
  private readonly unanswered = new Set<Query>();
  /** until when statements are refused without being sent (see refuseWhileUnreachable) */
  private unreachableUntil = 0;
  /** when (performance.now()) the main connection last answered a statement without an error */
  private answeredAt = -Infinity;
  private sent = 0;
  private settled = 0;
  private savepoints = 0;
  private closed = false;

  /**
   * @param answerTimeoutMs how long a statement's promise waits for its answer before it gives up on the server (a
   * daemon passes a tenth of its lease, half the lease keeper's margin); the server ends a statement waiting on a lock
   * at a quarter of it, and any statement at twice it
   */
  constructor(
    private readonly url: string,
    private readonly answerTimeoutMs = 60_000,
  ) {
    this.sql = connectPostgres(url, {
      max: 1,
      connection: { lock_timeout: Math.max(50, Math.floor(answerTimeoutMs / 4)), statement_timeout: 2 * answerTimeoutMs },
      failFast: true,
      onclose: () => this.connectionLost(),
    });
    openStores.add(this);
    guardAgainstClientThrows();
  }

  /** postgres.js threw out of its own callbacks (guardAgainstClientThrows): what was under way on the connection is lost. */
  clientThrew(err: unknown): void {
    const open = this.levels.length > 0;
    this.connectionLost();
    if (!open) this.onConnectionLost?.(err);
  }

  /** Applies the PostgreSQL migrations not yet applied (several daemons starting at once migrate once). */
  async migrate(): Promise<number[]> {
    return migratePostgres(this.sql);
  }

  get inTransaction(): boolean {
    return this.levels.length > 0;
  }

  /** the cluster's connections: the leases repository and the LISTEN run there (made on first use) */
  get side(): PgSql {
    this.sideSql ??= connectPostgres(this.url, { max: 4, connection: { lock_timeout: 10_000, statement_timeout: 5 * this.answerTimeoutMs }, failFast: true });
    return this.sideSql;
  }

  /**
   * LISTENs on `channel` on a side connection; `onListening` is told each time the LISTEN (re)starts (after a lost
   * connection too: what was sent meanwhile was not heard). Each notification is handed over on its own turn.
   */
  async listen(channel: string, onNotification: (payload: string) => void, onListening?: () => void): Promise<void> {
    await this.side.listen(
      channel,
      (payload) => setImmediate(() => onNotification(payload)),
      () => onListening && setImmediate(onListening),
    );
  }

  /**
   * Resolves when the main connection answered a statement within the last `recentMs`, or else once it answers a
   * `SELECT 1`; rejects when that fails or takes over `timeoutMs`. A node whose own statements cannot run must let its
   * sessions go to a node whose can. (A busy connection is not asked: its answers say it works.)
   */
  async probe(timeoutMs: number, recentMs: number): Promise<void> {
    if (performance.now() - this.answeredAt < recentMs) return;
    await this.answerWithin(this.sql.unsafe('SELECT 1'), timeoutMs);
  }

  prepare<Row = unknown>(text: string): Statement<Row> {
    return new PgStatement<Row>(this, text);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args: A) =>
      runTransaction(this, this.turns, async () => {
        const outer = !this.inTransaction;
        const name = `tx_${++this.savepoints}`;
        if (outer) this.begin();
        else this.savepoint(name);
        let result: R;
        try {
          result = await fn(...args);
        } catch (err) {
          await (outer ? this.rollback() : this.rollbackTo(name));
          throw err;
        }
        await (outer ? this.commit() : this.release(name));
        return result;
      });
  }

  /** PostgreSQL's commits are durable once answered (synchronous_commit is left on) */
  durably<R>(fn: () => Promise<R>): Promise<R> {
    return fn();
  }

  async exec(text: string): Promise<void> {
    await this.write(text, [], true);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    openStores.delete(this);
    if (openStores.size === 0) process.removeListener('uncaughtException', onClientThrow);
    await this.queue;
    await this.sideSql?.end({ timeout: 5 });
    await this.sql.end({ timeout: 5 });
  }

  /** A read: in a transaction, in a savepoint of its own (a read that fails must fail alone, as on SQLite). */
  read(text: string, params: unknown[], values: boolean): Promise<Result> {
    const level = this.levels.at(-1);
    if (!level) {
      this.refuseWhileUnreachable();
      return this.timed(this.enqueue(() => this.send(text, params, values)));
    }
    return this.timed(counted(level, this.enqueue(() => this.guardedRead(level, text, params, values))));
  }

  /** A write whose answer is waited for (its count, or RETURNING rows); in the open transaction when there is one. */
  write(text: string, params: unknown[], simple = false): Promise<Result> {
    const level = this.levels.at(-1);
    if (!level) this.refuseWhileUnreachable();
    return this.timed(counted(level, this.enqueue(() => this.sendIn(level, text, params, simple))));
  }

  /** A write nobody waits for: it joins the tick (its failure is the tick's), or fails alone outside one. */
  stage(text: string, params: unknown[]): void {
    if (this.levels.length === 0) this.tick?.join();
    const level = this.levels.at(-1);
    counted(level, this.enqueue(() => this.sendIn(level, text, params, false))).catch(() => {
      // reported by the transaction's commit (or, outside one, lost with its statement: nothing waited for it)
    });
  }

  /** Opens a transaction without a wait (the tick's, or an explicit one): its statements follow it down the pipe. */
  begin(): void {
    const level: Level = { pending: [], reads: [], unanswered: 0 };
    this.levels.push(level);
    void this.enqueue(async () => {
      const begun = this.ofTransaction(this.sql.unsafe(BEGIN)).then(undefined, (err: unknown) => {
        level.error ??= this.transactionError(err);
      });
      level.pending.push(begun);
    });
  }

  /**
   * Commits the open transaction (and any savepoint left open in it) without holding the connection's queue: settles when
   * PostgreSQL has committed it, rejects when it was rolled back (with the first error of its statements), or with
   * TIMEOUT when no answer came within five answer times.
   */
  commit(): Promise<void> {
    const levels = this.levels.splice(0);
    const sent = this.enqueueBlocking(async () => {
      const reads = levels.flatMap((level) => level.reads);
      if (reads.length > 0) await Promise.allSettled(reads);
      // a transaction known to have failed (its connection was lost) is rolled back, never committed
      const failed = levels.find((level) => level.error)?.error;
      if (failed) {
        this.sql.unsafe('ROLLBACK').execute().then(undefined, () => {});
        return { commit: Promise.reject(failed) };
      }
      const commit = this.ofTransaction(this.sql.unsafe(COMMIT));
      this.sql.unsafe('ROLLBACK').execute().then(undefined, () => {});
      return { commit };
    });
    return this.timed(sent.then(({ commit }) => commit), 5 * this.answerTimeoutMs).then(
      () => undefined,
      async (err: unknown) => {
        for (const level of levels) await Promise.allSettled(level.pending);
        throw levels.find((level) => level.error)?.error ?? this.transactionError(err);
      },
    );
  }

  private async rollback(): Promise<void> {
    this.levels.splice(0);
    await this.enqueue(() => this.sql.unsafe('ROLLBACK').execute()).catch(() => {});
  }

  private savepoint(name: string): void {
    const outer = this.levels.at(-1)!;
    const level: Level = { pending: [], reads: [], unanswered: 0, error: outer.error };
    this.levels.push(level);
    if (level.error) return;
    void this.enqueue(async () => {
      level.pending.push(this.ofTransaction(this.sql.unsafe(`SAVEPOINT ${name}`)).then(undefined, (err: unknown) => (level.error ??= this.transactionError(err))));
    });
  }

  /** Ends a savepoint: kept when its statements all succeeded, else rolled back, its first error thrown. */
  private release(name: string): Promise<void> {
    const level = this.levels.pop()!;
    const outer = this.levels.at(-1);
    if (!level.error && level.unanswered === 0) {
      // every statement of it answered, none failed: the release goes down the pipe without a wait (should it fail, the
      // transaction around it is spoilt and its commit says so)
      void this.enqueue(() =>
        this.ofTransaction(this.sql.unsafe(`RELEASE SAVEPOINT ${name}`)).then(undefined, (err: unknown) => {
          if (outer) outer.error ??= this.transactionError(err);
        }),
      );
      return Promise.resolve();
    }
    return this.enqueueBlocking(async () => {
      await Promise.allSettled([...level.pending, ...level.reads]);
      if (level.error) {
        await this.undoSavepoint(name, level.error);
        throw level.error;
      }
      await this.ofTransaction(this.sql.unsafe(`RELEASE SAVEPOINT ${name}`)).then(undefined, (err: unknown) => {
        throw this.spoil(this.transactionError(err));
      });
    });
  }

  private rollbackTo(name: string): Promise<void> {
    const level = this.levels.pop()!;
    return this.enqueueBlocking(async () => {
      await Promise.allSettled([...level.pending, ...level.reads]);
      await this.undoSavepoint(name, level.error);
    });
  }

  /** Rolls a savepoint back; when even that fails, the transaction around it is spoilt and its commit says why. */
  private async undoSavepoint(name: string, cause: Error | undefined): Promise<void> {
    try {
      await this.ofTransaction(this.sql.unsafe(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`));
    } catch (err) {
      this.spoil(cause ?? this.transactionError(err));
    }
  }

  /** The open transaction rolls back at its commit, which rejects with `error`. */
  spoilTransaction(error: Error): void {
    const outer = this.levels[0];
    if (outer) outer.error ??= error;
  }

  private spoil<E extends Error>(error: E): E {
    const outer = this.levels.at(-1);
    if (outer) outer.error ??= error;
    return error;
  }

  /**
   * Sends the read between a savepoint and its release, without holding the queue. When it fails, the savepoint is
   * rolled back as soon as that is known, and the read fails alone; a statement sent meanwhile (another request's, in
   * the same transaction) fails with it, which fails that transaction: rare (a read PostgreSQL refuses) and never silent.
   */
  private guardedRead(level: Level, text: string, params: unknown[], values: boolean): Promise<Result> {
    if (level.error) return Promise.reject(level.error);
    const name = `read_${++this.savepoints}`;
    const saved = this.ofTransaction(this.sql.unsafe(`SAVEPOINT ${name}`));
    const query = this.ofTransaction(this.query(text, params, values));
    const released = this.ofTransaction(this.sql.unsafe(`RELEASE SAVEPOINT ${name}`));
    const read = Promise.allSettled([saved, query, released]).then(async ([, result]) => {
      if (result.status === 'fulfilled') return result.value;
      try {
        await this.ofTransaction(this.sql.unsafe(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`));
      } catch (err) {
        // the transaction was spoilt before the read (a write sent ahead of it failed): its commit reports that, and so
        // does the read: why the transaction failed, not that it had
        await Promise.allSettled(level.pending);
        throw (level.error ??= this.transactionError(err));
      }
      throw PostgresError.from(result.reason);
    });
    level.reads.push(read.then(undefined, () => {}));
    return read;
  }

  /** Sends a statement in `level`'s transaction (the one open when it was made), or on its own. */
  private sendIn(level: Level | undefined, text: string, params: unknown[], simple: boolean): Promise<Result> {
    if (!level) return this.send(text, params, false, simple);
    // a transaction that failed already sends nothing more: on a new connection it would run outside it
    if (level.error) return Promise.reject(level.error);
    const answered = this.ofTransaction(this.query(text, params, false, simple)).then(undefined, (err: unknown) => {
      throw (level.error ??= this.transactionError(err));
    });
    level.pending.push(answered.then(undefined, () => {}));
    return answered;
  }

  private send(text: string, params: unknown[], values: boolean, simple = false): Promise<Result> {
    const query = this.query(text, params, values, simple);
    query.execute();
    return this.answered(query);
  }

  private query(text: string, params: unknown[], values: boolean, simple = false): Query {
    // prepared: after its first run a statement is sent in one message, pipelined (an unprepared one with parameters
    // stops the pipe until the server has described it)
    const query = simple ? this.sql.unsafe(text) : this.sql.unsafe(text, params as never[], { prepare: params.length > 0 });
    return values ? (query.values() as unknown as Query) : query;
  }

  /** Sends a query of the open transaction, kept among `unanswered` until it is answered. */
  private ofTransaction(query: Query): Promise<Result> {
    query.execute();
    this.unanswered.add(query);
    const answered = this.answered(query);
    const done = () => void this.unanswered.delete(query);
    answered.then(done, done);
    return answered;
  }

  private answered(query: Query): Promise<Result> {
    this.sent++;
    return Promise.resolve(query).then(
      (result) => {
        this.settled++;
        this.answeredAt = performance.now();
        return result as Result;
      },
      (err: unknown) => {
        this.settled++;
        const error = PostgresError.from(err);
        if (error.unreachable) this.unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS;
        throw error;
      },
    );
  }

  private transactionError(err: unknown): PostgresError {
    const error = PostgresError.from(err);
    return LOST_CODES.has(error.code ?? '') ? new PostgresError(CONNECTION_LOST) : error;
  }

  /** Runs `step` once the steps before it have been sent; the queue goes on once this one has sent its statements. */
  private enqueue<T>(step: () => Promise<T> | T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the PostgreSQL store is closed'));
    let result!: Promise<T>;
    const sent = this.queue.then(() => {
      result = Promise.resolve(step());
    });
    this.queue = sent.then(
      () => {},
      () => {},
    );
    return sent.then(() => result);
  }

  /** Runs `step` in turn, and holds the queue until it has finished (it waits on answers before it sends more). */
  private enqueueBlocking<T>(step: () => Promise<T>): Promise<T> {
    const result = this.queue.then(step);
    this.queue = result.then(
      () => {},
      () => {},
    );
    return result;
  }

  /** A promise that gives up (TIMEOUT) when the server has not answered within the answer time, plus the queue ahead of it. */
  private timed<T>(promise: Promise<T>, timeoutMs = this.answerTimeoutMs): Promise<T> {
    const ahead = Math.max(0, this.sent - this.settled);
    return this.answerWithin(promise, timeoutMs + ahead * QUEUED_STATEMENT_MS);
  }

  private answerWithin<T>(promise: PromiseLike<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((done, fail) => {
      const timer = setTimeout(() => {
        this.unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS;
        fail(new PostgresError({ message: `PostgreSQL did not answer within ${timeoutMs / 1000} s`, code: 'TIMEOUT' }));
      }, timeoutMs);
      promise.then(
        (value) => {
          clearTimeout(timer);
          done(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          fail(PostgresError.from(err));
        },
      );
    });
  }

  /**
   * After a statement failed to reach the server, the next ones are refused at once for a moment instead of each
   * waiting in turn (a node cut off from its database must stop its sessions within its lease's margin, and every
   * stop that touches the store would otherwise wait its full answer time); nothing refused was sent.
   */
  private refuseWhileUnreachable(): void {
    if (Date.now() < this.unreachableUntil) throw new PostgresError({ message: 'PostgreSQL is unreachable (a statement just failed to reach it); try again in a moment', code: 'UNREACHABLE' });
  }

  /**
   * The connection closed with a transaction open: the transaction is gone with it. postgres.js would send the queries
   * still queued for it to the connection that replaces it, where they would run (and commit) outside the transaction:
   * they are cancelled before it connects (postgres.js calls `onclose` first), and the transaction reports the loss.
   */
  private connectionLost(): void {
    if (this.closed) return;
    const lost = new PostgresError(CONNECTION_LOST);
    for (const level of this.levels) level.error ??= lost;
    for (const query of this.unanswered) query.cancel();
    this.unanswered.clear();
    if (this.levels.length > 0) this.onConnectionLost?.(lost);
  }
}

/** Connects, applies the migrations not yet applied, and hands over the store. */
export async function openPgDb(url: string, answerTimeoutMs?: number): Promise<PgDb> {
  const db = new PgDb(url, answerTimeoutMs);
  try {
    await db.migrate();
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}
