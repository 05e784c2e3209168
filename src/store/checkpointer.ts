// WAL checkpoints mostly off the event loop (SQLite store). SQLite's automatic checkpoint runs inside the COMMIT that takes
// the log past 1,000 pages, on the daemon's thread: it copies the log into the database file and syncs it there, 40-60 ms
// at a burst's write rates, during which the daemon answers nobody. So a worker thread with a connection of its own
// checkpoints often (PASSIVE: it never waits for the daemon's writes nor makes them wait), and the daemon's connection
// only past a larger log, to finish the copy the worker could not (a log is rewound only after a checkpoint that copied
// all of it, which a worker racing a burst's writes never does) with little left to copy. If the worker dies, the
// daemon's connection checkpoints at SQLite's default again.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import type { Db } from './db.js';

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

export function startCheckpointer(db: Db, file: string, logger: Logger, intervalMs = CHECKPOINT_EVERY_MS): Checkpointer {
  db.pragma(`wal_autocheckpoint = ${DAEMON_CHECKPOINT_PAGES}`);
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: { file, intervalMs } });
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((done) => worker.once('exit', () => done()));
  worker.on('error', (err) => {
    logger.error({ err }, 'the WAL checkpoint thread failed; the daemon checkpoints by itself again');
    db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  });
  worker.once('exit', () => {
    if (!stopping) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  });
  return {
    async stop() {
      stopping = true;
      // held until its last checkpoint is done and its connection closed
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
