// The database of a daemon under test, opened beside it: its SQLite file, or in the suite's PostgreSQL pass its own
// PostgreSQL database, through the bridge the daemon itself uses (so the same statements run on either).
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Db } from '../../src/store/db.js';
import { PostgresDatabase } from '../../src/store/postgres-bridge.js';
import { postgresStoreEnv } from './daemon.js';

/** `options` are better-sqlite3's (readonly, fileMustExist); PostgreSQL has no use for them. */
export function openDaemonDb(dataDir: string, options?: Database.Options): Db {
  const url = postgresStoreEnv(dataDir).GATEWAY_DATABASE_URL;
  if (url) return new PostgresDatabase(url) as unknown as Db;
  return new Database(join(dataDir, 'gateway.db'), options);
}

/** Whether this run's daemons keep their state in PostgreSQL (the suite's second pass). */
export const onPostgres = (): boolean => process.env.GATEWAY_TEST_PG_URL !== undefined;
