// A node restarted under its id frees the leases its previous run held (killed before it could release them), and does
// so before it listens: a session the first requests start keeps its new lease. It freed them after listening, and a
// session created at once lost its lease to that (the PostgreSQL pass's "pair a: 409 SESSION_ON_OTHER_NODE").
// Deterministic: another client holds a row lock on the old lease, so the freeing waits until it is let go; the node
// must not answer before.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectPostgres } from '../../src/store/postgres.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const LOCK_HELD_MS = 4000;

let server: TestPostgres;
const daemons: TestDaemon[] = [];

before(async () => {
  server = await startPostgres();
});

after(async () => {
  await Promise.all(daemons.map((daemon) => daemon.cleanup()));
  server?.stop();
});

/**
 * A node `n1` on a fresh database ran session `old` and was killed holding its lease; another client now holds a row
 * lock on that lease (the caller ends it: `locker`), so the restarted node's freeing of it waits.
 */
async function killedNodeWithLockedLease(database: string, extraEnv: Record<string, string> = {}) {
  const url = server.createDatabase(database);
  const env = { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: url, GATEWAY_NODE_ID: 'n1', ...extraEnv };
  const first = await startDaemon({ env });
  daemons.push(first);
  await pairedSession(first, 'old', '15557100001');
  await first.kill();
  const sql = connectPostgres(url, { max: 2 });
  const locker = await sql.reserve();
  await locker.unsafe('BEGIN');
  await locker.unsafe("SELECT * FROM session_leases WHERE session = 'old' FOR UPDATE");
  const close = async () => {
    locker.release();
    await sql.end({ timeout: 1 });
  };
  return { env, sql, locker, close };
}

test("a restarted node frees its previous run's leases before it answers: a session started at once keeps its lease", async () => {
  const { env, sql, locker, close } = await killedNodeWithLockedLease('restart_frees');
  try {
    // postgres.js sends a query once it is awaited
    const commit = () => locker.unsafe('COMMIT').then(() => undefined);
    let released: Promise<void> | undefined;
    const letGo = setTimeout(() => (released = commit()), LOCK_HELD_MS);
    const again = await startDaemon({ env });
    daemons.push(again);
    assert.match(again.output(), /freed the leases this node's previous run held/, 'the node answered before it freed the old leases');
    // created as soon as the node answers: while the old lease is still locked, had it answered before freeing it
    const created = await again.request('POST', '/api/sessions', { name: 'fresh', start: true, engine: 'sandbox' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    clearTimeout(letGo);
    await (released ?? commit());
    const paired = await again.request('POST', '/api/sandbox/sessions/fresh/pair', { phoneNumber: '15557100002' });
    assert.equal(paired.status, 200, `the new session lost its lease: ${JSON.stringify(paired.body)}`);
    const [lease] = await sql`SELECT node, expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint AS live FROM session_leases WHERE session = 'fresh'`;
    assert.deepEqual({ node: lease?.node, live: lease?.live }, { node: 'n1', live: true });
  } finally {
    await close();
  }
});

test('a daemon that cannot free them (the lock outlasts its statement timeout) exits with the error, instead of running without listening', async () => {
  const { env, locker, close } = await killedNodeWithLockedLease('restart_fails', { GATEWAY_LEASE_SECONDS: '3' });
  try {
    // a 3 s lease: the cluster's statements give up after 1.5 s
    await assert.rejects(startDaemon({ env, listenTimeoutMs: 30_000 }), /exited with 1 before listening[\s\S]*statement timeout/);
  } finally {
    await locker.unsafe('ROLLBACK');
    await close();
  }
});
