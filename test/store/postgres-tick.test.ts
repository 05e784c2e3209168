// Issue 22, the write path on PostgreSQL: a tick's writes commit together, in order with the ticks before them, and an
// answer can wait for them; a tick that fails is rolled back whole and says so. On a real server (Debian's PostgreSQL).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectPostgres, type PgSql } from '../../src/store/postgres.js';
import { createPgTickTransaction } from '../../src/store/postgres-tick.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let server: TestPostgres;
let writer: PgSql;
let reader: PgSql;

before(async () => {
  server = await startPostgres();
  writer = connectPostgres(server.url, { max: 1 });
  reader = connectPostgres(server.url, { max: 1 });
  await writer`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`;
});

after(async () => {
  await Promise.all([writer, reader].map((sql) => sql?.end({ timeout: 1 })));
  server?.stop();
});

const valueOf = async (k: string) => (await reader<Array<{ v: number }>>`SELECT v FROM t WHERE k = ${k}`)[0]?.v;
const tickBoundary = () => new Promise((r) => setImmediate(r));

test("a tick's writes commit together, and an answer waiting on them sees them committed", async () => {
  const commits: number[] = [];
  const tick = createPgTickTransaction(writer, (err) => assert.fail(String(err)), (seconds) => commits.push(seconds));
  assert.equal(tick.committed(), undefined, 'nothing to wait for before a write');
  tick.write('INSERT INTO t (k, v) VALUES ($1, $2)', ['a', 1]);
  tick.write('INSERT INTO t (k, v) VALUES ($1, $2)', ['b', 2]);
  const committed = tick.committed();
  assert.ok(committed);
  await committed;
  assert.deepEqual([await valueOf('a'), await valueOf('b')], [1, 2]);
  assert.equal(commits.length, 1, 'one commit for the tick');
});

test('a tick that fails is rolled back whole: its waiters are told, the next tick commits', async () => {
  const lost: unknown[] = [];
  const tick = createPgTickTransaction(writer, (err) => lost.push(err));
  tick.write('INSERT INTO t (k, v) VALUES ($1, $2)', ['c', 3]);
  tick.write('INSERT INTO t (k, v) VALUES ($1, $2)', ['a', 9]); // the key exists: the tick fails
  await assert.rejects(tick.committed()!, /duplicate key/);
  assert.equal(lost.length, 1);
  assert.equal(await valueOf('c'), undefined, "the tick's other write was rolled back with it");
  tick.write('INSERT INTO t (k, v) VALUES ($1, $2)', ['c', 4]);
  await tick.committed();
  assert.equal(await valueOf('c'), 4);
});

test('ticks commit in order: a later tick never overtakes a slow one still in flight, even with connections to spare', async () => {
  const pool = connectPostgres(server.url, { max: 4 });
  // every connection open, so that the second tick finds one free
  await Promise.all(Array.from({ length: 4 }, () => pool`SELECT pg_sleep(0.05)`));
  const tick = createPgTickTransaction(pool, (err) => assert.fail(String(err)));
  const upsert = 'INSERT INTO t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v';
  // the first tick takes 300 ms before its write; the second, sent meanwhile, must still land after it
  tick.write('SELECT pg_sleep(0.3)', []);
  tick.write(upsert, ['order', 1]);
  const first = tick.committed();
  await tickBoundary();
  tick.write(upsert, ['order', 2]);
  const second = tick.committed();
  assert.notEqual(first, second);
  await Promise.all([first, second]);
  assert.equal(await valueOf('order'), 2);
  await pool.end({ timeout: 1 });
});

test('flush sends at once and settles when committed', async () => {
  const tick = createPgTickTransaction(writer, (err) => assert.fail(String(err)));
  tick.write('INSERT INTO t (k, v) VALUES ($1, $2)', ['f', 7]);
  await tick.flush();
  assert.equal(await valueOf('f'), 7);
  assert.equal(tick.committed(), undefined);
});
