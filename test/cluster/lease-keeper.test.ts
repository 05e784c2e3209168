// Issue 22, session ownership by lease, on a real PostgreSQL (Debian's, started by the test): one node at a time, takeover
// only after expiry and with a higher epoch, stale writes refused, renewals that hold, a node cut off from the database
// stopping its sessions before another may start them, and a move on purpose going to the named node.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LeaseKeeper, type LossReason } from '../../src/cluster/lease-keeper.js';
import { createLeasesRepo, StaleLeaseError, type LeasesRepo } from '../../src/store/leases.js';
import { connectPostgres, migratePostgres, type PgSql } from '../../src/store/postgres.js';
import { startPostgres, tcpRelay, type TestPostgres } from '../helpers/postgres.js';

/** long enough that a loaded 2-core machine (two test files at once) renews in time: renewals every 1 s, a 600 ms margin */
const LEASE_MS = 3000;

let server: TestPostgres;
let admin: PgSql;
const connections: PgSql[] = [];
const keepers: LeaseKeeper[] = [];

before(async () => {
  server = await startPostgres();
  admin = connectPostgres(server.url, { max: 2 });
  await migratePostgres(admin);
  await admin`INSERT INTO sessions (name, engine, should_run, created_at, updated_at)
    SELECT 's' || i, 'sandbox', 1, 'now', 'now' FROM generate_series(1, 20) AS i`;
});

after(async () => {
  for (const keeper of keepers) keeper.stop();
  await Promise.all([admin, ...connections].map((sql) => sql?.end({ timeout: 1 })));
  server?.stop();
});

/** A node: its own connection (through `url`, the server's by default) and repository, and a keeper recording losses. */
function node(id: string, url = server.url, clock = () => performance.now()) {
  const sql = connectPostgres(url, { max: 2 });
  connections.push(sql);
  const repo = createLeasesRepo(sql, id, LEASE_MS);
  const lost: Array<{ session: string; reason: LossReason; at: number }> = [];
  const keeper = new LeaseKeeper({ repo, leaseMs: LEASE_MS, onLost: (session, reason) => void lost.push({ session, reason, at: performance.now() }), onError: () => {}, clock });
  keepers.push(keeper);
  return { id, sql, repo, keeper, lost };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tries `acquire` every 20 ms until it succeeds; the epoch and when. */
async function acquireWhenFree(keeper: LeaseKeeper, session: string, timeoutMs = 10_000): Promise<{ epoch: number; at: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const epoch = await keeper.acquire(session);
    if (epoch !== undefined) return { epoch, at: performance.now() };
    assert.ok(performance.now() < deadline, `${session} never became free`);
    await sleep(20);
  }
}

test('one node at a time: a held lease is not taken; a released one is, under a higher epoch', async () => {
  const [a, b] = [node('a1'), node('b1')];
  assert.equal(await a.keeper.acquire('s1'), 1);
  assert.equal(await b.keeper.acquire('s1'), undefined);
  await a.keeper.release('s1');
  assert.equal(await b.keeper.acquire('s1'), 2);
  assert.deepEqual((await b.repo.lease('s1'))?.node, 'b1');
});

test('a node that stops renewing loses the session once the lease expires, not before; its old epoch cannot write', async () => {
  const [a, b] = [node('a2'), node('b2')];
  const taken = performance.now();
  const epoch = (await a.keeper.acquire('s2'))!;
  const { epoch: next, at } = await acquireWhenFree(b.keeper, 's2');
  assert.ok(at - taken >= LEASE_MS - 50, `taken over after ${Math.round(at - taken)} ms, before the lease of ${LEASE_MS} ms ran out`);
  assert.equal(next, epoch + 1);
  // a write of the old owner, fenced by its epoch, is refused; the new owner's goes through
  await assert.rejects(a.sql.begin((tx) => a.repo.fence(tx, 's2', epoch)), StaleLeaseError);
  await b.sql.begin((tx) => b.repo.fence(tx, 's2', next));
  // the old owner learns it at its next renewal
  await a.keeper.renew();
  assert.deepEqual(a.lost.map((l) => [l.session, l.reason]), [['s2', 'expired']]);
});

test('renewals hold a session for as long as its node lives', async () => {
  const [a, b] = [node('a3'), node('b3')];
  a.keeper.start();
  await a.keeper.acquire('s3');
  const until = performance.now() + 2.5 * LEASE_MS;
  while (performance.now() < until) {
    assert.equal(await b.keeper.acquire('s3'), undefined, 'the session was taken from a live node');
    await sleep(100);
  }
  assert.deepEqual(a.lost, []);
  a.keeper.stop();
});

test('a node cut off from the database stops its sessions before another node may start them, within twice the lease', async () => {
  const link = await tcpRelay(server);
  const [a, b] = [node('a4', link.url), node('b4')];
  a.keeper.start();
  await a.keeper.acquire('s4');
  await a.keeper.acquire('s5');
  await sleep(LEASE_MS / 2);
  const cut = performance.now();
  link.cut();
  const [four, five] = await Promise.all([acquireWhenFree(b.keeper, 's4'), acquireWhenFree(b.keeper, 's5')]);
  const stopped = new Map(a.lost.map((l) => [l.session, l]));
  for (const [session, taken] of [['s4', four], ['s5', five]] as const) {
    const lost = stopped.get(session);
    assert.ok(lost, `${session} was never stopped on the cut-off node`);
    assert.equal(lost.reason, 'unreachable');
    assert.ok(lost.at < taken.at, `${session}: started elsewhere ${Math.round(lost.at - taken.at)} ms before the cut-off node stopped it`);
    assert.ok(taken.at - cut <= 2 * LEASE_MS, `${session}: failover took ${Math.round(taken.at - cut)} ms`);
    assert.equal(taken.epoch, 2);
  }
  a.keeper.stop();
});

test('a session moved on purpose goes to the node named, not to another', async () => {
  const [a, b, c] = [node('a5'), node('b5'), node('c5')];
  a.keeper.start();
  await a.keeper.acquire('s6');
  assert.equal(await b.repo.requestMove('s6', 'b5'), false, 'b5 has never announced itself');
  await Promise.all([a, b, c].map((n) => n.repo.registerNode(`http://${n.id}.invalid`)));
  assert.equal(await b.repo.requestMove('s6', 'a5'), false, 'a5 holds it already');
  assert.equal(await b.repo.requestMove('s6', 'b5'), true);
  const asked = performance.now();
  const moved = acquireWhenFree(b.keeper, 's6', 3 * LEASE_MS);
  // another node may not take it meanwhile, even once the owner let go
  while (!(await b.repo.lease('s6'))?.node.startsWith('b')) {
    assert.equal(await c.keeper.acquire('s6'), undefined, 'a third node took a session moving elsewhere');
    await sleep(30);
  }
  const { epoch, at } = await moved;
  assert.equal(epoch, 2);
  assert.ok(at - asked < LEASE_MS, `the move took ${Math.round(at - asked)} ms: it waited for the lease to expire`);
  assert.deepEqual(a.lost.map((l) => [l.session, l.reason]), [['s6', 'moved']]);
  a.keeper.stop();
});

test('sessions no node holds are found, and live nodes with how many they hold', async () => {
  const a = node('a6');
  await a.repo.registerNode('http://127.0.0.1:4001');
  await a.keeper.acquire('s10');
  await a.keeper.acquire('s11');
  const orphans = await a.repo.orphans(100);
  assert.ok(!orphans.includes('s10') && !orphans.includes('s11'));
  assert.ok(orphans.includes('s12'));
  const live = await a.repo.liveNodes(10_000);
  assert.deepEqual(live.filter((n) => n.id === 'a6').map((n) => [n.url, n.sessions]), [['http://127.0.0.1:4001', 2]]);
});

test('a lease taken while a renewal is on its way is not reported lost by that renewal', async () => {
  let answer!: (result: Awaited<ReturnType<LeasesRepo['heartbeat']>>) => void;
  const repo = {
    heartbeat: () => new Promise((done) => (answer = done)),
    acquire: async () => 7,
    handOver: async () => {},
    release: async () => {},
  } as unknown as LeasesRepo;
  const lost: string[] = [];
  let now = 0;
  const keeper = new LeaseKeeper({ repo, leaseMs: LEASE_MS, onLost: (session) => void lost.push(session), clock: () => now });
  const renewal = keeper.renew();
  now = 10;
  assert.equal(await keeper.acquire('fresh'), 7);
  now = 20;
  answer({ renewed: [], moving: [] });
  await renewal;
  assert.deepEqual(lost, []);
  assert.equal(keeper.epochOf('fresh'), 7);
  // the next renewal, sent after the lease was taken, does judge it
  const next = keeper.renew();
  answer({ renewed: [], moving: [] });
  await next;
  assert.deepEqual(lost, ['fresh']);
});

test('a lease its node gave up is never renewed again, even when the database answers again before it expires', async () => {
  let jump = 0;
  const b = node('b7');
  const sql = connectPostgres(server.url, { max: 2 });
  connections.push(sql);
  const repo = createLeasesRepo(sql, 'a7', LEASE_MS);
  const lost: string[] = [];
  // the node is cut off: its deadline passes (its clock jumps a lease ahead) and releasing the lease fails
  const keeper = new LeaseKeeper({
    repo: { ...repo, release: () => Promise.reject(new Error('unreachable')) },
    leaseMs: LEASE_MS,
    onLost: (session) => void lost.push(session),
    onError: () => {},
    clock: () => performance.now() + jump,
  });
  keepers.push(keeper);
  keeper.start();
  const epoch = (await keeper.acquire('s13'))!;
  const before = (await b.repo.lease('s13'))!.expiresAt;
  jump = LEASE_MS;
  const deadline = performance.now() + 5_000;
  while (lost.length === 0) {
    assert.ok(performance.now() < deadline, 'the node never stopped the session past its deadline');
    await sleep(20);
  }
  // the database answers again: the next renewal must leave the given-up lease to expire
  await keeper.renew();
  assert.equal((await b.repo.lease('s13'))?.expiresAt, before, 'a renewal took back a lease its node gave up');
  assert.equal((await acquireWhenFree(b.keeper, 's13')).epoch, epoch + 1);
  keeper.stop();
});
