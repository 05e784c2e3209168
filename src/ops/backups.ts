// Backups of the running daemon's database into <dataDir>/backups: a consistent copy through SQLite's online backup
// (in a worker thread, so requests keep being served), optionally with the media blobs, listed, read back, pruned,
// and taken on a schedule (backup.schedule, keeping backup.keep).
import { createReadStream, existsSync, readFileSync, writeFileSync, linkSync, copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, closeSync, openSync, chmodSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { GatewayError } from '../errors.js';
import { isStagedFile } from '../media/blob-store.js';
import type { Logger } from '../logger.js';
import { copyDatabaseInWorker } from '../store/database-file.js';
import type { AuditRecord } from '../audit/log.js';

export interface BackupMedia {
  /** the directory holding the copied blobs (`<backup>-media`) */
  path: string;
  files: number;
  sizeBytes: number;
}

export interface BackupInfo {
  name: string;
  path: string;
  sizeBytes: number;
  createdAt: string;
  /** only on the answer of the backup just taken */
  durationMs?: number;
  schemaVersion?: number;
  media: BackupMedia | null;
}

/** `gateway-20261125T114500123Z.db`: sortable by name, and nothing else in the directory matches */
export const BACKUP_NAME_PATTERN = '^gateway-[0-9]{8}T[0-9]{9}Z\\.db$';
const BACKUP_NAME = new RegExp(BACKUP_NAME_PATTERN);

export class Backups {
  readonly dir: string;
  /** backups run one at a time; a second request waits for the first */
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      /** the SQLite file; undefined on PostgreSQL, whose backups are pg_dump's */
      dbFile: string | undefined;
      dataDir: string;
      mediaDir: string;
      logger: Logger;
      /** records what the daemon did by itself (scheduled backups) in the audit log */
      audit?: (entry: AuditRecord) => void;
    },
  ) {
    this.dir = join(deps.dataDir, 'backups');
  }

  create(options: { withMedia: boolean }): Promise<BackupInfo> {
    if (this.deps.dbFile === undefined) {
      return Promise.reject(new GatewayError('BACKUP_NOT_AVAILABLE', 'the daemon backs up a SQLite store only; this one is PostgreSQL: back it up with pg_dump (docs/SCALING.md)'));
    }
    const run = this.queue.then(() => this.take(options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Every backup in the directory, newest first. */
  list(): BackupInfo[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((name) => BACKUP_NAME.test(name))
      .sort()
      .reverse()
      .map((name) => this.info(name));
  }

  open(name: string): { stream: Readable; size: number } {
    const path = join(this.dir, name);
    if (!BACKUP_NAME.test(name) || !existsSync(path)) throw new GatewayError('BACKUP_NOT_FOUND', `backup ${name} not found`);
    return { stream: createReadStream(path), size: statSync(path).size };
  }

  /** Deletes all but the newest `keep` backups (and their media); returns the names removed. */
  prune(keep: number): string[] {
    const removed = this.list().slice(keep).map((backup) => backup.name);
    for (const name of removed) {
      rmSync(join(this.dir, name), { force: true });
      rmSync(join(this.dir, `${name}-media`), { recursive: true, force: true });
    }
    return removed;
  }

  /** Takes a backup every `intervalMs` (the first one when the newest backup is that old), keeping the newest `keep`. */
  schedule(intervalMs: number, keep: number, withMedia: boolean): void {
    const newest = this.list()[0];
    const last = newest ? Date.parse(newest.createdAt) : 0;
    const arm = (delay: number) => {
      this.timer = setTimeout(() => void tick(), Math.max(0, delay));
      this.timer.unref();
    };
    const tick = async () => {
      try {
        const backup = await this.create({ withMedia });
        const pruned = this.prune(keep);
        this.deps.logger.info({ backup: backup.name, sizeBytes: backup.sizeBytes, durationMs: backup.durationMs, pruned }, 'scheduled backup written');
        this.deps.audit?.({ actor: SYSTEM, action: 'backup.create', target: backup.name, outcome: 'succeeded', details: { scheduled: true, withMedia, pruned } });
      } catch (err) {
        this.deps.logger.error({ err }, 'scheduled backup failed');
        this.deps.audit?.({ actor: SYSTEM, action: 'backup.create', target: null, outcome: 'failed', details: { scheduled: true, withMedia } });
      }
      if (this.timer) arm(intervalMs);
    };
    arm(last + intervalMs - Date.now());
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async take(options: { withMedia: boolean }): Promise<BackupInfo> {
    const started = Date.now();
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const name = `gateway-${new Date(started).toISOString().replace(/[-:.]/g, '')}.db`;
    const path = join(this.dir, name);
    const partial = `${path}.partial`;
    // created 0600 before SQLite writes into it: the copy holds the (sealed) credentials
    closeSync(openSync(partial, 'w', 0o600));
    chmodSync(partial, 0o600);
    let schemaVersion: number;
    try {
      schemaVersion = await copyDatabaseInWorker(this.deps.dbFile!, partial);
      renameSync(partial, path);
    } catch (err) {
      rmSync(partial, { force: true });
      throw err;
    }
    if (options.withMedia) this.copyMedia(`${path}-media`);
    return { ...this.info(name), durationMs: Date.now() - started, schemaVersion };
  }

  /** Hard links when the file system allows (blobs are written once, never changed), copies otherwise. */
  private copyMedia(target: string): void {
    mkdirSync(target, { recursive: true, mode: 0o700 });
    if (!existsSync(this.deps.mediaDir)) return;
    for (const file of readdirSync(this.deps.mediaDir)) {
      // a download still being written is no blob yet (a restore's reconcile would remove it anyway)
      if (isStagedFile(file)) continue;
      const from = join(this.deps.mediaDir, file);
      try {
        if (!statSync(from).isFile()) continue;
        try {
          linkSync(from, join(target, file));
        } catch {
          copyFileSync(from, join(target, file));
        }
      } catch (err) {
        // a blob evicted while the backup ran is simply not in it
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }

  private info(name: string): BackupInfo {
    const path = join(this.dir, name);
    const stamp = /^gateway-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z/.exec(name)!;
    const [, y, mo, d, h, mi, s, ms] = stamp;
    return {
      name,
      path,
      sizeBytes: statSync(path).size,
      createdAt: `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`,
      media: mediaOf(`${path}-media`),
    };
  }
}

function mediaOf(dir: string): BackupMedia | null {
  if (!existsSync(dir)) return null;
  let files = 0;
  let sizeBytes = 0;
  for (const file of readdirSync(dir)) {
    files += 1;
    sizeBytes += statSync(join(dir, file)).size;
  }
  return { path: dir, files, sizeBytes };
}

/** `off` → undefined; `hourly`, `daily`, `weekly`, or `<n>s|m|h|d` → milliseconds. */
export function scheduleInterval(schedule: string): number | undefined {
  const named: Record<string, number> = { off: 0, hourly: 3_600_000, daily: 86_400_000, weekly: 604_800_000 };
  if (schedule in named) return named[schedule] || undefined;
  const match = /^([1-9]\d*)(s|m|h|d)$/.exec(schedule);
  if (!match) throw new Error(`backup.schedule: not a schedule: ${schedule}`);
  return Number(match[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
}

const SYSTEM = { kind: 'system' } as const;

/** Written by `gateway restore` beside the database it put in place; the next daemon start records it and removes it. */
const RESTORE_NOTE = 'restored.json';

export interface RestoreNote {
  /** the backup file's name (not its path: the audit log names what, not where on the operator's disk) */
  from: string;
  at: string;
  /** the name the replaced database is kept under, when there was one */
  replaced: string | null;
}

/** Written as a new file: a leftover note (or a symlink put in its place) is removed, never followed. */
export function noteRestore(dataDir: string, note: RestoreNote): void {
  const path = join(dataDir, RESTORE_NOTE);
  rmSync(path, { force: true });
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeFileSync(fd, JSON.stringify(note));
  } finally {
    closeSync(fd);
  }
}

/** Records a restore done while the daemon was stopped (the restore could not write the audit log of a database it replaced). */
export function recordRestore(dataDir: string, audit: (entry: AuditRecord) => void, logger: Logger): void {
  const path = join(dataDir, RESTORE_NOTE);
  if (!existsSync(path)) return;
  try {
    const note = JSON.parse(readFileSync(path, 'utf8')) as RestoreNote;
    audit({ actor: { kind: 'system', name: 'gateway restore' }, action: 'backup.restore', target: note.from, outcome: 'succeeded', details: { restoredAt: note.at, replaced: note.replaced } });
  } catch (err) {
    logger.warn({ err }, `could not read ${RESTORE_NOTE}; the restore is not in the audit log`);
  }
  rmSync(path, { force: true });
}
