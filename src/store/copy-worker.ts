// Runs copyDatabase in a worker thread, so that a large database is copied without holding up the daemon's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { copyDatabase } from './database-file.js';

const { source, target } = workerData as { source: string; target: string };
copyDatabase(source, target).then(
  (version) => parentPort!.postMessage({ ok: true, version }),
  (err: unknown) => parentPort!.postMessage({ ok: false, message: (err as Error).message }),
);
