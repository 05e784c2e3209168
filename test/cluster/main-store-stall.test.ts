// Issue 27 item 2: a node renews its leases only while its own store answers. The leases are renewed on side
// connections, so a node whose main connection (every repository's statements) stalled used to keep its sessions, and
// they answered 503 through every node for the whole stall instead of moving. Here the main connection of a real store
// is held by a 5 s statement while its side connections are fine: the node lets its session go within the lease.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Cluster } from '../../src/cluster/cluster.js';
import { createLogger } from '../../src/logger.js';
import { openPgDb, type PgDb } from '../../src/store/pg-db.js';
import { waitFor } from '../helpers/daemon.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const LEASE_MS = 4000;

let server: TestPostgres;
let db: PgDb;
let cluster: Cluster | undefined;

before(async () => {
  server = await startPostgres();
  // answers waited for up to 3 s: the 5 s statement below runs to its end (statements time out at twice that)
  db = await openPgDb(server.createDatabase('stall'), 3000);
  await db.prepare('INSERT INTO sessions (name, engine, should_run, created_at, updated_at) VALUES (?, ?, 1, ?, ?)').run('m1', 'sandbox', 'now', 'now');
});

after(async () => {
  cluster?.leave();
  await db?.close();
  server?.stop();
});

test('a node whose main connection stalls stops renewing and lets its session go, though its side connections answer', async () => {
  const relinquished: Array<{ session: string; at: number }> = [];
  cluster = new Cluster({ db, nodeId: 'x1', leaseMs: LEASE_MS, logger: createLogger('fatal'), onNotification: () => {}, onListening: () => {} });
  await cluster.join('http://127.0.0.1:9');
  await cluster.run({ adopt: async () => {}, relinquish: async (session) => void relinquished.push({ session, at: performance.now() }), shouldRunCount: async () => 0 });
  assert.equal(await cluster.claim('m1'), true);

  // renewals hold it while the main connection answers
  await new Promise((r) => setTimeout(r, LEASE_MS));
  assert.equal(relinquished.length, 0);
  assert.notEqual(cluster.epochOf('m1'), undefined);

  // the main connection busy for 5 s: a write of a transaction, sent without a wait
  const stalledAt = performance.now();
  db.begin();
  db.prepare('SELECT pg_sleep(5)').stage();
  const stall = db.commit();
  // the side connections still answer
  assert.equal((await cluster.leases.liveNodes(LEASE_MS)).length, 1);
  await waitFor(() => relinquished.length > 0, LEASE_MS + 1000, 'the session let go');
  assert.equal(relinquished[0]!.session, 'm1');
  assert.ok(relinquished[0]!.at - stalledAt < LEASE_MS, `let go ${Math.round(relinquished[0]!.at - stalledAt)} ms into the stall`);
  assert.equal(cluster.epochOf('m1'), undefined);
  await stall;
});
