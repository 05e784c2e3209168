// PostgreSQL (store.kind: postgres, for several daemons on one database): the connection and the schema migrations.
// postgres.js was chosen over node-postgres by bench/pg-clients.ts (docs/SCALING.md has the figures): it pipelines
// queries on a connection, so a round trip costs less than half and a tick's writes go out as one burst.
import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { LATEST_SCHEMA_VERSION, SchemaTooNewError } from './database-file.js';
import { MIGRATIONS } from './migrations/index.js';

export type PgSql = postgres.Sql;

/** One key for every daemon that migrates this database: the second to start waits for the first's migrations. */
const MIGRATION_LOCK = 0x6761_7465; // 'gate'

/**
 * Connects to `url`. Times are kept in ms in BIGINT columns, which the wire protocol carries as text: they come back as
 * numbers (every ms timestamp until the year 287,396 is a safe integer), as better-sqlite3 gives them.
 */
export function connectPostgres(url: string, options: { max?: number; connection?: Record<string, string | number>; failFast?: boolean; onclose?: () => void } = {}): PgSql {
  // postgres.js's own option, missing from its types
  const ownSocket = { socket: openSocket };
  return postgres(url, {
    ...ownSocket,
    max: options.max ?? 10,
    connection: options.connection,
    // failFast: a lost server is reported at once and tried again every quarter second, not after backoffs growing to
    // 20 s (postgres.js's default) during which the statements made meanwhile would wait
    ...(options.failFast ? { backoff: () => 0.25, connect_timeout: 5 } : {}),
    onnotice: () => {},
    ...(options.onclose ? { onclose: options.onclose } : {}),
    types: {
      bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) },
      // SUM and AVG answer numeric: a number too, as SQLite answers
      numeric: { to: 1700, from: [1700], serialize: (value: number) => String(value), parse: (value: string) => Number(value) },
    },
  });
}

/**
 * Applies the migrations not yet applied (their `postgres` texts), all in one transaction under an advisory lock: several
 * daemons starting at once migrate once, and a failure leaves the schema as it was. Refuses, changing nothing, a database
 * migrated by a newer build. Returns the versions applied.
 */
export async function migratePostgres(sql: PgSql, upTo = Number.POSITIVE_INFINITY): Promise<number[]> {
  return sql.begin(async (tx) => {
    // a migration may take longer than a statement of the daemon may (the connection's statement_timeout)
    await tx`SET LOCAL statement_timeout = 0`;
    await tx`SET LOCAL lock_timeout = 0`;
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`;
    const applied = new Set((await tx<Array<{ version: number }>>`SELECT version FROM schema_migrations`).map((row) => row.version));
    const newest = Math.max(0, ...applied);
    if (newest > LATEST_SCHEMA_VERSION) throw new SchemaTooNewError('the PostgreSQL database', newest);
    const done: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version) || migration.version > upTo) continue;
      await tx.unsafe(migration.postgres);
      await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${new Date().toISOString()})`;
      done.push(migration.version);
    }
    return done;
  });
}

/** what postgres.js hands its `socket` option: the URL's hosts and ports (or a Unix socket's path) */
interface SocketSettings {
  host: string[];
  port: number[];
  path?: string | false;
}

/**
 * The connection's socket, with Nagle's algorithm off: statements are pipelined, and a small write sent while an earlier
 * one is unacknowledged would otherwise wait for the server's delayed ACK (40 ms on Linux) before it leaves. postgres.js
 * leaves the setting as Node makes it (on). The socket is handed over while it connects, as postgres.js's own is: what
 * it writes waits for the connection, and a failure to connect reaches postgres.js's handlers (its timeout, its
 * reconnects). It connects to the URL's first host (the daemon takes one); TLS, when asked for, is set up over it by
 * postgres.js as before.
 */
function openSocket(settings: SocketSettings): Socket {
  return settings.path ? connect(settings.path) : connect({ host: settings.host[0], port: settings.port[0], noDelay: true });
}
