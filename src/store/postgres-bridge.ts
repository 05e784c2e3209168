// PostgreSQL behind the interface the repositories already speak (store.kind: postgres): the part of better-sqlite3's
// Database they use (prepare → run/get/all, pluck, raw; transaction; exec), synchronous, over a worker thread that owns the
// connection (postgres-bridge-worker.ts). So every repository, service and route runs unchanged on either store, and the
// same suite tests both. What it costs: a read blocks this thread for one round trip to the server, as a read of SQLite
// blocks it for a page fetch. What it does not cost: the writes of a transaction (a tick's events, messages, deliveries)
// are sent without a wait and pipelined; only the commit is waited for, by the answers that need it (tick transaction).
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Db } from './db.js';

export type BridgeRequest =
  | { id: number; op: 'query'; text: string; params: unknown[]; values: boolean; read: boolean }
  | { id: number; op: 'begin'; failed?: SerializedError }
  | { id: number; op: 'commit' | 'rollback' | 'migrate' | 'close' }
  | { id: number; op: 'savepoint' | 'release' | 'rollbackTo'; name: string }
  | { id: number; op: 'cluster'; nodeId: string; leaseMs: number; channel: string }
  | { id: number; op: 'call'; service: string; method: string; args: unknown[] };

export interface SerializedError {
  message: string;
  code?: string;
}

export type BridgeReply = { id: number; rows: unknown[]; count: number } | { id: number; error: SerializedError };
/** a NOTIFY on the cluster's channel, or that the LISTEN (re)started, sent by the worker unasked */
type Notification = { notification: string } | { listening: true };

/** An error PostgreSQL (or the connection) gave a statement; `code` is its SQLSTATE, or the connection's error code. */
export class PostgresError extends Error {
  readonly code?: string;
  constructor(error: SerializedError) {
    super(error.message);
    this.name = 'PostgresError';
    this.code = error.code;
  }

  /** the server could not be reached: nothing is wrong with the statement */
  get unreachable(): boolean {
    return UNREACHABLE.has(this.code ?? '') || this.code === 'UNREACHABLE' || this.code?.startsWith('08') === true;
  }

  /** the statement could not run now (the server is out of reach, or it timed out waiting on a lock or on the server) */
  get unavailable(): boolean {
    return this.unreachable || BUSY.has(this.code ?? '');
  }
}


/**
 * Errors that say the server could not be reached (PostgreSQL shutting down or starting up, postgres.js's and Node's
 * codes, and this bridge's own timeout); SQLSTATE class 08 too, the connection exceptions.
 */
const UNREACHABLE = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'TIMEOUT']);
/**
 * a statement that gave up on a lock (lock_timeout) or ran past statement_timeout: the server is there, but busy; or a
 * savepoint of a transaction that ended with its lost connection (25P01, no transaction on the new one), or a statement
 * after one of these in a transaction (25P02); a transaction PostgreSQL aborted to end a deadlock or a serialization
 * conflict (40P01, 40001), which a retry completes
 */
const BUSY = new Set(['55P03', '57014', '25P01', '25P02', '40001', '40P01']);
/** how long statements are refused at once after one failed to reach the server */
const UNREACHABLE_PAUSE_MS = 1000;
/** how much longer a wait may take for each statement sent ahead of it without a wait */
const QUEUED_STATEMENT_MS = 1;

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
 * and a name looked up with it finds nothing, as no stored name has it).
 */
const toWire = (value: unknown) => (typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value);

/** A value back from the worker: a bytea comes as a plain Uint8Array, and the repositories expect a Buffer (as SQLite gives). */
const fromWire = (value: unknown) => (value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value);

function rowFromWire(row: unknown): unknown {
  if (Array.isArray(row)) return row.map(fromWire);
  const record = row as Record<string, unknown>;
  for (const key in record) record[key] = fromWire(record[key]);
  return record;
}

/** The result of a write sent without a wait: reading `changes` waits for it (and throws its error). */
interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

class Statement {
  private readonly text: string;
  private readonly slots: Array<number | string>;
  private plucked = false;
  private rawRows = false;

  constructor(
    private readonly db: PostgresDatabase,
    source: string,
  ) {
    ({ text: this.text, slots: this.slots } = numberParameters(source));
  }

  pluck(on = true): this {
    this.plucked = on;
    return this;
  }

  raw(on = true): this {
    this.rawRows = on;
    return this;
  }

  run(...args: unknown[]): RunResult {
    return this.db.write(this.text, this.bind(args));
  }

  get(...args: unknown[]): unknown {
    return this.all(...args)[0];
  }

  all(...args: unknown[]): unknown[] {
    const values = this.plucked || this.rawRows;
    const rows = this.db.read(this.text, this.bind(args), values);
    return this.plucked ? rows.map((row) => (row as unknown[])[0]) : rows;
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

const isNamed = (arg: unknown) => typeof arg === 'object' && arg !== null && !Buffer.isBuffer(arg) && !(arg instanceof Uint8Array) && !Array.isArray(arg);

export class PostgresDatabase {
  readonly dialect = 'postgres';
  private worker!: Worker;
  private port!: MessagePort;
  /** the cluster's part of the worker (joinCluster), set up again in a worker started after one died */
  private clusterRequest: { nodeId: string; leaseMs: number; channel: string } | undefined;
  /** told when the worker died and a new one took its place (what was under way failed) */
  onWorkerLost: ((err: unknown) => void) | undefined;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private nextId = 1;
  private readonly answers = new Map<number, BridgeReply>();
  /** writes sent without a wait whose answer is still to come, and requests a promise waits for */
  private readonly pending = new Map<number, (reply: BridgeReply) => void>();
  private savepoints = 0;
  private onNotification: ((payload: string) => void) | undefined;
  private onListening: (() => void) | undefined;
  /** until when statements are refused without being sent (see refuseWhileUnreachable) */
  private unreachableUntil = 0;
  /** the id of the last request this thread waited for */
  private lastWaited = 0;
  /** when (performance.now()) the main connection last answered a statement without an error */
  private answeredAt = -Infinity;
  /** requests answered on the side connections, not the main one (remote) */
  private readonly sideRequests = new Set<number>();
  /** requests this thread stopped waiting for */
  private readonly abandoned = new Set<number>();
  /** promises waiting for an answer */
  private asked = 0;
  private depth = 0;
  private closed = false;

  /**
   * @param answerTimeoutMs how long this thread waits for one answer before it gives up on the server: a daemon's lease
   * keeper must run well within its margin, so a daemon passes a tenth of its lease (half the margin)
   */
  constructor(
    private readonly url: string,
    private readonly answerTimeoutMs = 60_000,
  ) {
    this.startWorker();
  }

  private startWorker(): void {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const worker = new Worker(new URL('./postgres-bridge-worker.js', import.meta.url), { workerData: { url: this.url, port: port2, signal: this.signal, answerTimeoutMs: this.answerTimeoutMs }, transferList: [port2] });
    this.worker = worker;
    worker.unref();
    this.port.on('message', (message: BridgeReply | Notification) => this.deliver(message));
    if (this.asked === 0) this.port.unref();
    let failure: unknown;
    // the PostgreSQL client can throw out of its own callbacks when a connection drops at a bad moment, which ends the
    // worker: a new one takes its place rather than the process going down with it
    worker.on('error', (err) => (failure = err));
    worker.on('exit', () => {
      if (!this.closed && this.worker === worker) this.replaceWorker(failure ?? new Error('the PostgreSQL worker exited'));
    });
  }

  /**
   * After the worker died: whatever it had under way fails (a transaction open then fails at its commit, and the
   * statements sent into it fail, not run outside it), and a new worker is started, joining the cluster again.
   */
  private replaceWorker(err: unknown): void {
    const old = this.port;
    this.startWorker();
    old.close();
    this.onWorkerLost?.(err);
    const lost: SerializedError = { message: `the connection to PostgreSQL was lost: ${(err as Error)?.message ?? String(err)}`, code: 'CONNECTION_DESTROYED' };
    for (const [id, waiter] of [...this.pending]) {
      this.pending.delete(id);
      waiter({ id, error: lost });
    }
    for (let level = 0; level < this.depth; level++) this.control({ id: this.nextId++, op: 'begin', failed: lost }, false);
    if (this.clusterRequest) this.rejoin();
  }

  /** Sets the cluster's part up in a new worker, trying again every second while the server is out of reach. */
  private rejoin(): void {
    const worker = this.worker;
    this.ask({ id: this.nextId++, op: 'cluster', ...this.clusterRequest! }).catch((err: unknown) => {
      this.onWorkerLost?.(err);
      setTimeout(() => this.worker === worker && !this.closed && this.rejoin(), 1000).unref();
    });
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  /** Applies the PostgreSQL migrations not yet applied (several daemons starting at once migrate once). */
  async migrate(): Promise<number[]> {
    return (await this.ask({ id: this.nextId++, op: 'migrate' })) as number[];
  }

  /**
   * Starts the cluster's work on the worker's side connections: the leases repository (called
   * through `remote`), and a LISTEN on `channel` whose payloads go to `onNotification`; `onListening` is told each time
   * the LISTEN starts (after a lost connection too: what was sent meanwhile was not heard).
   */
  async joinCluster(nodeId: string, leaseMs: number, channel: string, onNotification: (payload: string) => void, onListening?: () => void): Promise<void> {
    this.onNotification = onNotification;
    this.onListening = onListening;
    await this.ask({ id: this.nextId++, op: 'cluster', nodeId, leaseMs, channel });
    this.clusterRequest = { nodeId, leaseMs, channel };
  }

  /**
   * A repository that runs on the worker's side connections, every method async (the worker's `cluster` services); a call
   * the server does not answer within five answer times fails with TIMEOUT.
   */
  remote<T extends object>(service: 'leases'): T {
    return new Proxy({} as T, {
      get: (_, method) => async (...args: unknown[]) => {
        const id = this.nextId++;
        this.sideRequests.add(id);
        return (await this.ask({ id, op: 'call', service, method: String(method), args }, 5 * this.answerTimeoutMs))[0];
      },
    });
  }

  /**
   * Resolves when the main connection (the one every repository's statement runs on) answered a statement within the
   * last `recentMs`, or else once it answers a `SELECT 1`; rejects when that fails or takes over `timeoutMs`. The
   * leases are renewed only then: a node whose own statements cannot run must let its sessions go to a node whose can.
   * (A busy connection is not asked: its answers say it works, and a probe would wait behind its queue.)
   */
  async probe(timeoutMs: number, recentMs: number): Promise<void> {
    if (performance.now() - this.answeredAt < recentMs) return;
    await this.ask({ id: this.nextId++, op: 'query', text: 'SELECT 1', params: [], values: true, read: true }, timeoutMs);
  }

  prepare(text: string): Statement {
    return new Statement(this, text);
  }

  /** better-sqlite3's transaction(fn): BEGIN…COMMIT, or a savepoint inside an open transaction; rolls back when fn throws */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args: A) => {
      const outer = this.depth === 0;
      const name = `sp${++this.savepoints}`;
      this.control(outer ? { id: this.nextId++, op: 'begin' } : { id: this.nextId++, op: 'savepoint', name }, false);
      this.depth++;
      let result: R;
      try {
        result = fn(...args);
      } catch (err) {
        this.depth--;
        this.control(outer ? { id: this.nextId++, op: 'rollback' } : { id: this.nextId++, op: 'rollbackTo', name }, false);
        throw err;
      }
      this.depth--;
      this.control(outer ? { id: this.nextId++, op: 'commit' } : { id: this.nextId++, op: 'release', name }, true);
      return result;
    };
  }

  /** Runs a statement without parameters (VACUUM after the sealed-column pass); transactions go through transaction() and begin(). */
  exec(text: string): this {
    this.read(text, [], false);
    return this;
  }

  /** Opens a transaction without a wait (the tick's): its writes follow it down the pipe. */
  begin(): void {
    this.control({ id: this.nextId++, op: 'begin' }, false);
    this.depth++;
  }

  /**
   * Commits the open transaction without blocking: settles when PostgreSQL has committed it (rejects when it rolled back,
   * or with TIMEOUT when no answer came within five answer times: the requests waiting on it are not held longer, and
   * are not told it committed)
   */
  commitAsync(): Promise<void> {
    this.depth = 0;
    return this.ask({ id: this.nextId++, op: 'commit' }, 5 * this.answerTimeoutMs).then(() => undefined);
  }

  /** SQLite's pragmas have no meaning here (PostgreSQL's own settings hold: a commit is durable once answered). */
  pragma(): unknown[] {
    return [];
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.wait(this.post({ id: this.nextId++, op: 'close' }));
    } finally {
      void this.worker.terminate();
    }
  }

  read(text: string, params: unknown[], values: boolean): unknown[] {
    this.refuseWhileUnreachable();
    const reply = this.wait(this.post({ id: this.nextId++, op: 'query', text, params, values, read: true }));
    return reply.rows.map(rowFromWire);
  }

  write(text: string, params: unknown[]): RunResult {
    if (this.depth === 0) this.refuseWhileUnreachable();
    const id = this.post({ id: this.nextId++, op: 'query', text, params, values: false, read: false });
    if (this.depth === 0) return resultOf(this.wait(id));
    // inside a transaction the write goes on without a wait; its outcome is read only if someone asks for it
    let reply: BridgeReply | undefined;
    this.pending.set(id, (answer) => (reply = answer));
    const settle = () => {
      if (!reply) {
        this.pending.delete(id);
        reply = this.wait(id);
      }
      return resultOf(reply);
    };
    return {
      get changes() {
        return settle().changes;
      },
      get lastInsertRowid() {
        return settle().lastInsertRowid;
      },
    };
  }

  private control(request: BridgeRequest, waitForIt: boolean): void {
    if (waitForIt && (request.op === 'begin' || request.op === 'savepoint')) this.refuseWhileUnreachable();
    const id = this.post(request);
    if (waitForIt) {
      this.wait(id);
    } else {
      // its failure comes back with the savepoint or commit that closes it
      this.pending.set(id, () => {});
    }
  }

  /** A request a promise waits for (at most `timeoutMs`, then TIMEOUT): the process stays up until its answer is in. */
  private ask(request: BridgeRequest, timeoutMs?: number): Promise<unknown[]> {
    return new Promise((done, fail) => {
      const id = this.post(request);
      if (this.asked++ === 0) this.port.ref();
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              // its answer, when it comes, is dropped
              this.pending.delete(id);
              this.abandoned.add(id);
              if (--this.asked === 0) this.port.unref();
              fail(new PostgresError({ message: `PostgreSQL did not answer within ${timeoutMs / 1000} s`, code: 'TIMEOUT' }));
            }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        if (--this.asked === 0) this.port.unref();
        if ('error' in reply) fail(new PostgresError(reply.error as SerializedError));
        else done(reply.rows);
      });
    });
  }

  private post(request: BridgeRequest): number {
    if (this.closed && request.op !== 'close') throw new Error('the PostgreSQL store is closed');
    this.port.postMessage(request);
    return request.id;
  }

  private deliver(message: BridgeReply | Notification): void {
    if ('id' in message && !this.sideRequests.delete(message.id) && 'rows' in message) this.answeredAt = performance.now();
    if ('id' in message && this.abandoned.delete(message.id)) return;
    if ('notification' in message) {
      // told on its own turn: a notification that arrives while this thread waits on a statement must not run inside it
      const listener = this.onNotification;
      if (listener) setImmediate(() => listener(message.notification));
      return;
    }
    if ('listening' in message) {
      const listener = this.onListening;
      if (listener) setImmediate(listener);
      return;
    }
    const reply = message;
    const waiter = this.pending.get(reply.id);
    if (waiter) {
      this.pending.delete(reply.id);
      waiter(reply);
    } else {
      this.answers.set(reply.id, reply);
    }
  }

  /**
   * After a statement failed to reach the server, the next ones are refused at once for a moment instead of each
   * waiting in turn (a node cut off from its database must stop its sessions within its lease's margin, and every
   * stop that touches the store would otherwise wait its full answer time); nothing refused was sent.
   */
  private refuseWhileUnreachable(): void {
    if (Date.now() < this.unreachableUntil) throw new PostgresError({ message: 'PostgreSQL is unreachable (a statement just failed to reach it); try again in a moment', code: 'UNREACHABLE' });
  }

  /** Blocks this thread until the answer to `id` is in (answers to earlier requests are handed to their owners on the way). */
  private wait(id: number): Extract<BridgeReply, { rows: unknown[] }> {
    // the statements sent ahead of it without a wait (a transaction's writes: a history batch holds thousands) run first
    const ahead = Math.max(0, id - this.lastWaited - 1);
    this.lastWaited = Math.max(this.lastWaited, id);
    const deadline = Date.now() + this.answerTimeoutMs + ahead * QUEUED_STATEMENT_MS;
    for (;;) {
      const reply = this.answers.get(id);
      if (reply) {
        this.answers.delete(id);
        if ('error' in reply) {
          if (new PostgresError(reply.error).unreachable) this.unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS;
          throw new PostgresError(reply.error);
        }
        return reply;
      }
      const seen = Atomics.load(this.signal, 0);
      const received = receiveMessageOnPort(this.port);
      if (received) {
        this.deliver(received.message as BridgeReply | Notification);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.signal, 0, seen, left) === 'timed-out') {
        // its answer, when it comes, is dropped
        this.abandoned.add(id);
        this.unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS;
        throw new PostgresError({ message: `PostgreSQL did not answer within ${this.answerTimeoutMs / 1000} s`, code: 'TIMEOUT' });
      }
    }
  }
}

function resultOf(reply: BridgeReply): RunResult {
  if ('error' in reply) throw new PostgresError(reply.error);
  const first = reply.rows[0] as { id?: unknown } | undefined;
  return { changes: reply.count, lastInsertRowid: Number(first?.id ?? 0) };
}

/** The bridge as the repositories' `Db` (it implements the part of better-sqlite3 they use; the PostgreSQL suite proves it). */
export async function openPostgresDatabase(url: string, answerTimeoutMs?: number): Promise<Db> {
  const postgres = new PostgresDatabase(url, answerTimeoutMs);
  try {
    await postgres.migrate();
  } catch (err) {
    postgres.close();
    throw err;
  }
  return postgres as unknown as Db;
}

export function isPostgres(db: Db): boolean {
  return (db as unknown as { dialect?: string }).dialect === 'postgres';
}
