// The thread behind startCheckpointer (checkpointer.ts): its own connection to gateway.db, a PASSIVE checkpoint every
// `intervalMs` (never waits for the daemon's writes, nor makes them wait), until told to stop.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('wal_autocheckpoint = 0');

const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // SQLITE_BUSY: another checkpoint (a backup's) is under way; the next turn tries again
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
  }
};
const timer = setInterval(checkpoint, intervalMs);

parentPort!.on('message', (message: 'stop') => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort!.close();
});
