// The database of a daemon under test, opened beside it: its SQLite file, or in the suite's PostgreSQL pass its own
// PostgreSQL database, through the same store interface the daemon itself uses (so the same statements run on either).
// Its statements answer with promises: `await db.prepare(…).get()`, and `await db.close()` when done.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SqliteDb, type Db } from '../../src/store/db.js';
import { PgDb } from '../../src/store/pg-db.js';
import { postgresStoreEnv } from './daemon.js';

/**
 * `options` are better-sqlite3's (readonly, fileMustExist); PostgreSQL has no use for them. The file is opened as it
 * is (no migration, no pragmas): a test reads or edits what the daemon wrote, and a read-only look writes nothing.
 */
export function openDaemonDb(dataDir: string, options?: Database.Options): Db {
  const url = postgresStoreEnv(dataDir).GATEWAY_DATABASE_URL;
  if (url) return new PgDb(url);
  return new SqliteDb(new Database(join(dataDir, 'gateway.db'), options));
}

/** Whether this run's daemons keep their state in PostgreSQL (the suite's second pass). */
export const onPostgres = (): boolean => process.env.GATEWAY_TEST_PG_URL !== undefined;
