// The database as a file: its schema version, integrity, size, whether another process holds it open, and consistent
// copies of it (SQLite's online backup). Used by the daemon at start, by backups, and by `gateway restore` / `doctor`.
import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { MIGRATIONS } from './migrations/index.js';

/** The newest schema this build knows: the last migration's number. */
export const LATEST_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** A database written by a newer build: this one must not run on it (its migrations are forward-only). */
export class SchemaTooNewError extends Error {
  constructor(
    readonly file: string,
    readonly version: number,
  ) {
    super(
      `${file} has schema version ${version}, newer than this build of the gateway knows (${LATEST_SCHEMA_VERSION}): ` +
        'it was written by a newer version. Run that version again, or restore a backup taken before the upgrade; nothing was changed',
    );
    this.name = 'SchemaTooNewError';
  }
}

type Db = Database.Database;

/** The highest applied migration; 0 for a database without the migrations table. */
export function schemaVersionOf(db: Db): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return 0;
  return (db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) ?? 0;
}

/** Throws SchemaTooNewError when the file holds a newer schema; reads only (run before anything opens it for writing). */
export function refuseNewerSchema(file: string): void {
  if (!existsSync(file) || statSync(file).size === 0) return;
  const version = withReadOnly(file, schemaVersionOf);
  if (version > LATEST_SCHEMA_VERSION) throw new SchemaTooNewError(file, version);
}

export interface DatabaseInspection {
  /** schema version (0: not a gateway database) */
  version: number;
  /** what the integrity check reported; empty when the file is sound */
  problems: string[];
  sizeBytes: number;
  /** bytes in the -wal file beside it (0 when none) */
  walBytes: number;
}

/**
 * Opens the file read-only and checks it: `quick` runs PRAGMA quick_check (O(N), no index cross-check), `full`
 * PRAGMA integrity_check. A file SQLite cannot read at all (not a database, truncated header) is reported, not thrown.
 */
export function inspectDatabase(file: string, depth: 'quick' | 'full'): DatabaseInspection {
  const sizeBytes = statSync(file).size;
  const walBytes = existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0;
  try {
    return withReadOnly(file, (db) => {
      const report = db.pragma(depth === 'quick' ? 'quick_check(20)' : 'integrity_check(20)', { simple: false }) as Array<Record<string, string>>;
      const problems = report.map((row) => Object.values(row)[0]!.replace(/\s*\n\s*/g, ' ')).filter((line) => line !== 'ok');
      return { version: problems.length ? safeVersion(db) : schemaVersionOf(db), problems, sizeBytes, walBytes };
    });
  } catch (err) {
    return { version: 0, problems: [(err as Error).message], sizeBytes, walBytes };
  }
}

const safeVersion = (db: Db): number => {
  try {
    return schemaVersionOf(db);
  } catch {
    return 0;
  }
};

/**
 * Whether another connection (a running daemon, on this host) has the database open: a WAL database's readers and
 * writers all hold a shared lock on it, so an exclusive lock taken without waiting fails while one is open.
 */
export function isDatabaseInUse(file: string): boolean {
  if (!existsSync(file)) return false;
  const db = new Database(file, { timeout: 0, fileMustExist: true });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw err;
  } finally {
    db.close();
  }
}

/**
 * Writes a consistent copy of `source` (including what its -wal holds) into `target`, through SQLite's online backup on
 * a read-only connection of its own. The whole copy is one backup step, that is one read transaction: a snapshot, never
 * half of a transaction, and writers on other connections are not held up (WAL). The copy is left in rollback-journal
 * mode, one self-contained file (the daemon turns WAL back on when it opens it). Returns the copy's schema version.
 * `asWriter` wraps everything done to the target (the restore runs it as the data directory's owner); the source is
 * opened and read before, as the caller is (a backup may be readable by root only).
 */
export async function copyDatabase(source: string, target: string, asWriter: <T>(write: () => Promise<T>) => Promise<T> = (write) => write()): Promise<number> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    // a first read opens the source's -wal and -shm too, which stay open for the backup below
    db.pragma('schema_version', { simple: true });
    return await asWriter(async () => {
      // the first step copies 0 pages (better-sqlite3 starts it so); every page then goes in the next one
      await db.backup(target, { progress: () => 0x7fffffff });
      const copy = new Database(target, { fileMustExist: true });
      try {
        copy.pragma('journal_mode = DELETE');
        return schemaVersionOf(copy);
      } finally {
        copy.close();
      }
    });
  } finally {
    db.close();
  }
}

/** copyDatabase in a worker thread (the daemon's own event loop keeps serving meanwhile). */
export function copyDatabaseInWorker(source: string, target: string): Promise<number> {
  return new Promise((done, fail) => {
    const worker = new Worker(new URL('./copy-worker.js', import.meta.url), { workerData: { source, target } });
    worker.once('message', (result: { ok: boolean; version?: number; message?: string }) => (result.ok ? done(result.version!) : fail(new Error(result.message))));
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`the backup worker exited with code ${code}`)));
  });
}

function withReadOnly<T>(file: string, read: (db: Db) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
