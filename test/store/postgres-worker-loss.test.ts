// Issue 27 item 2: the PostgreSQL client can throw out of its own callbacks when a connection drops at a bad moment
// (seen during `pg_ctl restart`: "Cannot read properties of null (reading 'write')"), which ends the bridge's worker
// thread, and the daemon exited with it. The bridge replaces a worker that died: what was under way fails (a transaction
// open then fails at its commit, and nothing sent into it runs outside it), and the next statements run.
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { after, before, test } from 'node:test';
import { PostgresDatabase, PostgresError } from '../../src/store/postgres-bridge.js';
import { waitFor } from '../helpers/daemon.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let server: TestPostgres;
let db: PostgresDatabase;

before(async () => {
  server = await startPostgres();
  db = new PostgresDatabase(server.createDatabase('worker_loss'), 5000);
  await db.migrate();
});

after(() => {
  db?.close();
  server?.stop();
});

/** The bridge's worker thread, ended from outside as an uncaught error inside it would end it. */
const workerOf = (bridge: PostgresDatabase) => (bridge as unknown as { worker: Worker }).worker;

test('a worker that dies is replaced: the open transaction fails at its commit, later statements run', async () => {
  const lost: unknown[] = [];
  db.onWorkerLost = (err) => lost.push(err);
  db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('before', '1');
  const first = workerOf(db);
  db.begin();
  db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('inside', '1');
  await first.terminate();
  await waitFor(() => workerOf(db) !== first, 5000, 'a new worker');
  db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('inside-too', '1');
  await assert.rejects(db.commitAsync(), (err) => err instanceof PostgresError && err.unavailable);
  assert.equal(lost.length, 1);
  const keys = db.prepare("SELECT key FROM settings WHERE key IN ('before', 'inside', 'inside-too') ORDER BY key").pluck().all();
  assert.deepEqual(keys, ['before'], 'a write of the lost transaction ran outside it');
});
