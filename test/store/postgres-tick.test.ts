// Issue 22, the store on PostgreSQL: the bridge that gives the repositories better-sqlite3's synchronous interface over a
// worker thread, and the tick transaction on it. A tick's writes go out without a wait and commit together, in order with
// the ticks before them; a read sees the writes made before it; a failure rolls back what it must and says so. On a real
// server (Debian's PostgreSQL).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTickTransaction } from '../../src/store/db.js';
import { PostgresDatabase, PostgresError } from '../../src/store/postgres-bridge.js';
import { connectPostgres, type PgSql } from '../../src/store/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let server: TestPostgres;
let db: PostgresDatabase;
let reader: PgSql;

before(async () => {
  server = await startPostgres();
  db = new PostgresDatabase(server.url);
  reader = connectPostgres(server.url, { max: 1 });
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL, big BIGINT, data BYTEA)');
});

after(async () => {
  db?.close();
  await reader?.end({ timeout: 1 });
  server?.stop();
});

/** what another connection sees: committed rows only */
const committedValue = async (k: string) => (await reader<Array<{ v: number }>>`SELECT v FROM t WHERE k = ${k}`)[0]?.v;
const tickBoundary = () => new Promise((r) => setImmediate(r));
const insert = () => db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
const upsert = () => db.prepare('INSERT INTO t (k, v) VALUES (@k, @v) ON CONFLICT (k) DO UPDATE SET v = excluded.v');

test("a tick's writes commit together, once, and an answer waiting on them sees them committed", async () => {
  const commits: number[] = [];
  const tick = createTickTransaction(db as never, (err) => assert.fail(String(err)), (seconds) => commits.push(seconds));
  assert.equal(tick.committed(), undefined, 'nothing to wait for before a write');
  tick.join();
  insert().run('a', 1);
  insert().run('b', 2);
  const committed = tick.committed();
  assert.ok(committed);
  await committed;
  assert.deepEqual([await committedValue('a'), await committedValue('b')], [1, 2]);
  assert.equal(commits.length, 1, 'one commit for the tick');
});

test('a read sees the writes made before it, in the same tick, before they commit', async () => {
  const tick = createTickTransaction(db as never, (err) => assert.fail(String(err)));
  tick.join();
  upsert().run({ k: 'r', v: 5 });
  assert.equal(db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('r'), 5);
  assert.equal(upsert().run({ k: 'r', v: 6 }).changes, 1, 'the count of a write is there when asked for');
  await tick.committed();
  assert.equal(await committedValue('r'), 6);
});

test('a tick that fails is rolled back whole: its waiters and onLost are told, and the next tick commits', async () => {
  const lost: unknown[] = [];
  const tick = createTickTransaction(db as never, (err) => lost.push(err));
  tick.join();
  insert().run('c', 3);
  insert().run('a', 9); // the key exists: the tick fails, though nobody looked at this write's result
  await assert.rejects(tick.committed()!, /duplicate key/);
  assert.equal(lost.length, 1);
  assert.equal(await committedValue('c'), undefined, "the tick's other write was rolled back with it");
  tick.join();
  insert().run('c', 4);
  await tick.committed();
  assert.equal(await committedValue('c'), 4);
});

test('ticks commit in order: a later tick never overtakes a slow one', async () => {
  const tick = createTickTransaction(db as never, (err) => assert.fail(String(err)));
  tick.join();
  db.prepare('SELECT pg_sleep(0.2)').run();
  upsert().run({ k: 'order', v: 1 });
  const first = tick.committed();
  await tickBoundary();
  tick.join();
  upsert().run({ k: 'order', v: 2 });
  const second = tick.committed();
  assert.notEqual(first, second);
  await Promise.all([first, second]);
  assert.equal(await committedValue('order'), 2);
});

test('transaction(): a savepoint inside a tick; a throw or a failed write rolls back its own writes only', async () => {
  const tick = createTickTransaction(db as never, (err) => assert.fail(String(err)));
  tick.join();
  upsert().run({ k: 'kept', v: 1 });
  const thrown = db.transaction(() => {
    upsert().run({ k: 'gone1', v: 1 });
    throw new Error('changed my mind');
  });
  assert.throws(() => thrown(), /changed my mind/);
  const failing = db.transaction(() => {
    upsert().run({ k: 'gone2', v: 1 });
    insert().run('kept', 2);
  });
  assert.throws(() => failing(), (err: unknown) => err instanceof PostgresError && err.code === '23505');
  upsert().run({ k: 'after', v: 1 });
  await tick.committed();
  assert.deepEqual(await Promise.all(['kept', 'gone1', 'gone2', 'after'].map(committedValue)), [1, undefined, undefined, 1]);
});

test('transaction() outside a tick commits at once, and a failure inside rolls it all back', async () => {
  const both = db.transaction((v: number) => {
    upsert().run({ k: 'tx1', v });
    upsert().run({ k: 'tx2', v });
  });
  both(7);
  assert.deepEqual([await committedValue('tx1'), await committedValue('tx2')], [7, 7]);
  const broken = db.transaction(() => {
    upsert().run({ k: 'tx1', v: 8 });
    db.prepare('INSERT INTO t (k, v) VALUES (?, NULL)').run('tx3');
  });
  assert.throws(() => broken(), /null value/);
  assert.equal(await committedValue('tx1'), 7);
});

test('values come back as better-sqlite3 gives them: BIGINT, COUNT and SUM as numbers, bytea as a Buffer', () => {
  const bytes = Buffer.from([0, 1, 2, 250, 255]);
  db.prepare('INSERT INTO t (k, v, big, data) VALUES (?, ?, ?, ?)').run('types', 1, 1_790_000_000_123, bytes);
  const row = db.prepare('SELECT big, data FROM t WHERE k = ?').get('types') as { big: number; data: Buffer };
  assert.equal(row.big, 1_790_000_000_123);
  assert.ok(Buffer.isBuffer(row.data));
  assert.deepEqual(row.data, bytes);
  assert.equal(typeof db.prepare('SELECT COUNT(*) FROM t').pluck().get(), 'number');
  assert.equal(db.prepare('SELECT SUM(v) FROM t WHERE k = ?').pluck().get('types'), 1);
  assert.deepEqual(db.prepare('SELECT k, v FROM t WHERE k = ?').raw().all('types'), [['types', 1]]);
});

test('a statement PostgreSQL refuses throws at once outside a transaction, with its SQLSTATE', () => {
  assert.throws(() => db.prepare('SELECT nope FROM t').all(), (err: unknown) => err instanceof PostgresError && err.code === '42703');
  assert.throws(() => db.prepare('SELECT * FROM t WHERE k = @k').all({}), /missing named parameter "k"/);
});

test("a read that fails inside a tick fails alone: the tick's writes before and after it commit", async () => {
  const tick = createTickTransaction(db as never, (err) => assert.fail(String(err)));
  tick.join();
  upsert().run({ k: 'before-bad-read', v: 1 });
  // a value past INTEGER's range: PostgreSQL refuses the statement (SQLite would find no row)
  assert.throws(() => db.prepare('SELECT k FROM t WHERE v = ?').all(2 ** 40), (err: unknown) => err instanceof PostgresError && err.code === '22003');
  upsert().run({ k: 'after-bad-read', v: 2 });
  await tick.committed();
  assert.deepEqual([await committedValue('before-bad-read'), await committedValue('after-bad-read')], [1, 2]);
});

test('a text with U+0000, which PostgreSQL cannot hold, is stored with U+FFFD in its place; a lookup with it finds nothing else', () => {
  db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run('nul\0in\0text', 1);
  assert.equal(db.prepare('SELECT k FROM t WHERE k LIKE ?').pluck().get('nul%'), 'nul\uFFFDin\uFFFDtext');
  assert.equal(db.prepare('SELECT k FROM t WHERE k = ?').pluck().get('a\0'), undefined);
});

/** Ends the daemon's connection from the server's side, as a restart of PostgreSQL does; waits until the bridge's worker has seen it close. */
async function dropDaemonConnection(): Promise<void> {
  const ended = await reader<Array<{ pid: number }>>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
  assert.equal(ended.length, 1, 'the bridge holds one connection');
  await reader`SELECT pg_terminate_backend(${ended[0]!.pid})`;
  await new Promise((r) => setTimeout(r, 300));
}

test('a transaction whose connection is lost before its commit is reported failed, and none of its writes is kept, before or after the loss', async () => {
  // begin and commitAsync as the tick uses them, with the loss in between (a tick commits on the next setImmediate)
  db.begin();
  insert().run('lost-before', 1);
  assert.equal(db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('lost-before'), 1, 'the write ran on the connection');
  await dropDaemonConnection();
  // postgres.js sends this to the new connection, where the transaction is not
  const after = insert().run('lost-after', 2);
  await assert.rejects(db.commitAsync(), (err: unknown) => err instanceof PostgresError && err.unreachable);
  assert.throws(() => after.changes, (err: unknown) => err instanceof PostgresError && err.unreachable);
  assert.deepEqual([await committedValue('lost-before'), await committedValue('lost-after')], [undefined, undefined]);

  // nothing written after the loss: the COMMIT alone reaches the new connection
  db.begin();
  insert().run('lost-alone', 3);
  assert.equal(db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('lost-alone'), 3);
  await dropDaemonConnection();
  await assert.rejects(db.commitAsync(), (err: unknown) => err instanceof PostgresError && err.unreachable);
  assert.equal(await committedValue('lost-alone'), undefined);

  // the next tick commits on the new connection
  const tick = createTickTransaction(db as never, (err) => assert.fail(String(err)));
  tick.join();
  insert().run('after-loss', 4);
  await tick.committed();
  assert.equal(await committedValue('after-loss'), 4);
});

test('a write outside a transaction commits on its own and says so; on a lost connection it fails and is not kept', async () => {
  assert.equal(insert().run('alone', 1).changes, 1);
  assert.equal(await committedValue('alone'), 1);
  await dropDaemonConnection();
  // the first statement after the loss meets the closed connection or the new one: either way, what it answers is true
  let kept: boolean;
  try {
    insert().run('alone-after-loss', 2);
    kept = true;
  } catch (err) {
    assert.ok(err instanceof PostgresError && err.unreachable, String(err));
    kept = false;
  }
  assert.equal(await committedValue('alone-after-loss'), kept ? 2 : undefined);
  assert.equal(db.prepare('SELECT count(*) FROM t WHERE k = ?').pluck().get('alone'), 1, 'the bridge works on the new connection');
});

test("committedSince: a tick lost after a request's mark fails its wait, though a later tick committed; a later mark does not see it", async () => {
  const tick = createTickTransaction(db as never, () => {});
  const mark = tick.mark();
  tick.join();
  insert().run('ledger-lost', 1);
  insert().run('a', 1); // the key exists: the tick fails
  const first = tick.committed()!;
  await assert.rejects(first, /duplicate key/);
  const laterMark = tick.mark();
  tick.join();
  insert().run('ledger-after', 2);
  await assert.rejects(tick.committedSince(mark)!, /duplicate key/);
  await tick.committedSince(laterMark);
  assert.deepEqual([await committedValue('ledger-lost'), await committedValue('ledger-after')], [undefined, 2]);
});
