// WAL checkpoints mostly off the event loop (SQLite store). SQLite's automatic checkpoint runs inside the COMMIT that takes
// the log past 1,000 pages, on the daemon's thread: it copies the log into the database file and syncs it there, 40-60 ms
// at a burst's write rates, during which the daemon answers nobody. So a worker thread with a connection of its own
// checkpoints often (PASSIVE: it never waits for the daemon's writes nor makes them wait), and the daemon's connection
// only past a larger log, to finish the copy the worker could not (a log is rewound only after a checkpoint that copied
// all of it, which a worker racing a burst's writes never does) with little left to copy. If the worker dies, the
// daemon's connection checkpoints at SQLite's default again.
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import type Database from 'better-sqlite3';

/** the daemon's own connection: the raw SQLite handle (SqliteDb.sqlite), for its checkpoint pragma */
type Connection = Database.Database;

/** how often the worker checkpoints: the log stays at a few MB under the heaviest writes measured */
const CHECKPOINT_EVERY_MS = 50;
/** the log (pages of 4 KB) past which the daemon's connection checkpoints what is left, with the worker */
const DAEMON_CHECKPOINT_PAGES = 16000;
/** SQLite's own default, put back if the worker is gone */
const AUTOCHECKPOINT_PAGES = 1000;

export interface Checkpointer {
  /** a last checkpoint, then the worker's connection is closed (before the daemon's own) */
  stop(): Promise<void>;
}

/**
 * The worker (10 MB of memory) starts once the log has grown past this: a daemon that writes little never needs it, and
 * until then the log grows by what a second of writes adds at most.
 */
const START_AT_LOG_BYTES = 1024 * 1024;
const WATCH_LOG_MS = 1000;

export function startCheckpointer(db: Connection, file: string, logger: Logger, intervalMs = CHECKPOINT_EVERY_MS, watchMs = WATCH_LOG_MS): Checkpointer {
  db.pragma(`wal_autocheckpoint = ${DAEMON_CHECKPOINT_PAGES}`);
  let worker: { stop(): Promise<void> } | undefined;
  let stopping = false;
  const watch = setInterval(() => {
    if (logBytes(`${file}-wal`) < START_AT_LOG_BYTES) return;
    clearInterval(watch);
    worker = startWorker(db, file, logger, intervalMs, () => stopping);
  }, watchMs).unref();
  return {
    async stop() {
      stopping = true;
      clearInterval(watch);
      await worker?.stop();
    },
  };
}

function logBytes(wal: string): number {
  try {
    return statSync(wal).size;
  } catch {
    return 0;
  }
}

function startWorker(db: Connection, file: string, logger: Logger, intervalMs: number, stopping: () => boolean): { stop(): Promise<void> } {
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: { file, intervalMs } });
  worker.unref();
  const exited = new Promise<void>((done) => worker.once('exit', () => done()));
  // in an event handler: a database already closed (the daemon failed to start) must not become an uncaught exception
  const checkpointByItself = () => {
    try {
      if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    } catch (err) {
      logger.warn({ err }, 'could not let the daemon checkpoint by itself again');
    }
  };
  worker.on('error', (err) => logger.error({ err }, 'the WAL checkpoint thread failed; the daemon checkpoints by itself again'));
  worker.once('exit', () => {
    if (!stopping()) checkpointByItself();
  });
  return {
    async stop() {
      // held until its last checkpoint is done and its connection closed
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
