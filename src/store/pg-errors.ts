// What PostgreSQL (or the connection to it) answered a statement with, told apart: unreachable, busy, or the statement's own fault.

/** An error PostgreSQL (or the connection) gave a statement; `code` is its SQLSTATE, or the connection's error code. */
export class PostgresError extends Error {
  readonly code?: string;
  constructor(error: { message: string; code?: string }) {
    super(error.message);
    this.name = 'PostgresError';
    this.code = error.code;
  }

  /** the server could not be reached: nothing is wrong with the statement */
  get unreachable(): boolean {
    return UNREACHABLE.has(this.code ?? '') || this.code?.startsWith('08') === true;
  }

  /** the statement could not run now (the server is out of reach, or it timed out waiting on a lock or on the server) */
  get unavailable(): boolean {
    return this.unreachable || BUSY.has(this.code ?? '');
  }

  /** postgres.js's error (or Node's, for the socket) as a PostgresError */
  static from(err: unknown): PostgresError {
    if (err instanceof PostgresError) return err;
    const e = err as { message?: string; code?: unknown };
    return new PostgresError({ message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : undefined });
  }
}

/**
 * `repo` (a repository on postgres.js directly: the leases on the side connections) with every failure PostgreSQL or the
 * connection gave it made a PostgresError, as the store's own statements' are: the answer to the request is then the
 * same 503 STORE_UNAVAILABLE, whichever connection found the server gone. Errors of its own (StaleLeaseError) pass as they are.
 */
export function withPostgresErrors<T extends object>(repo: T): T {
  return new Proxy(repo, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.catch((err: unknown) => {
          throw typeof (err as { code?: unknown })?.code === 'string' ? PostgresError.from(err) : err;
        });
      };
    },
  });
}

/**
 * Errors that say the server could not be reached (PostgreSQL shutting down or starting up, postgres.js's and Node's
 * codes, and the store's own timeout); SQLSTATE class 08 too, the connection exceptions.
 */
const UNREACHABLE = new Set(['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'TIMEOUT', 'UNREACHABLE']);
/**
 * a statement that gave up on a lock (lock_timeout) or ran past statement_timeout: the server is there, but busy; or a
 * savepoint of a transaction that ended with its lost connection (25P01, no transaction on the new one), or a statement
 * after one of these in a transaction (25P02); a transaction PostgreSQL aborted to end a deadlock or a serialization
 * conflict (40P01, 40001), which a retry completes
 */
const BUSY = new Set(['55P03', '57014', '25P01', '25P02', '40001', '40P01']);
