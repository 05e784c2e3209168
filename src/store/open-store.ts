// The store the daemon runs on, by store.kind: SQLite in <dataDir>/gateway.db (one daemon), or a PostgreSQL database that
// several daemons share (docs/SCALING.md). Either way the repositories get the same `Db`.
import { join } from 'node:path';
import type { GatewayConfig } from '../config/types.js';
import { openDatabase, type Db } from './db.js';
import { SchemaTooNewError } from './database-file.js';
import { openPgDb } from './pg-db.js';

export interface Store {
  kind: GatewayConfig['store']['kind'];
  db: Db;
  /** the SQLite file; undefined on PostgreSQL (backups, doctor and the file's size are SQLite's) */
  file?: string;
  /** the PostgreSQL URL without its password, for messages and the status page */
  location: string;
}

/** A problem with the store that the operator must fix (unreachable server, newer schema); the daemon does not start. */
export class StoreOpenError extends Error {}

export async function openStore(config: GatewayConfig, dataDir: string): Promise<Store> {
  if (config.store.kind === 'postgres') {
    const url = config.store.postgres.url!;
    const location = withoutPassword(url);
    try {
      // a statement that takes a tenth of a lease (half the lease keeper's margin) fails rather than hold up what the keeper
      // needs to stop sessions in time
      const answerTimeoutMs = Math.max(200, (config.cluster.leaseSeconds * 1000) / 10);
      return { kind: 'postgres', db: await openPgDb(url, answerTimeoutMs), location };
    } catch (err) {
      if (err instanceof SchemaTooNewError) throw new StoreOpenError(err.message);
      throw new StoreOpenError(`could not open the PostgreSQL database ${location}: ${(err as Error).message}`);
    }
  }
  const file = join(dataDir, 'gateway.db');
  try {
    return { kind: 'sqlite', db: openDatabase(file), file, location: file };
  } catch (err) {
    if (err instanceof SchemaTooNewError) throw new StoreOpenError(err.message);
    throw err;
  }
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
