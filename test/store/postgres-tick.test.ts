// Issues 22 and 29, the store on PostgreSQL: the repositories' interface (sql.ts) on one pipelined connection in the
// daemon's thread, and the tick transaction on it. A tick's writes go out without a wait and commit together, in order with
// the ticks before them; a read sees the writes made before it; a failure rolls back what it must and says so. On a real
// server (Debian's PostgreSQL).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTickTransaction } from '../../src/store/db.js';
import { PgDb } from '../../src/store/pg-db.js';
import { PostgresError } from '../../src/store/pg-errors.js';
import { TickAbortedError } from '../../src/store/sql.js';
import { connectPostgres, type PgSql } from '../../src/store/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let server: TestPostgres;
let db: PgDb;
let reader: PgSql;

before(async () => {
  server = await startPostgres();
  db = new PgDb(server.url);
  reader = connectPostgres(server.url, { max: 1 });
  await db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL, big BIGINT, data BYTEA)');
});

after(async () => {
  await db?.close();
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
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)), (seconds) => commits.push(seconds));
  assert.equal(tick.committed(), undefined, 'nothing to wait for before a write');
  tick.join();
  insert().stage('a', 1);
  insert().stage('b', 2);
  const committed = tick.committed();
  assert.ok(committed);
  await committed;
  assert.deepEqual([await committedValue('a'), await committedValue('b')], [1, 2]);
  assert.equal(commits.length, 1, 'one commit for the tick');
});

test('a read sees the writes made before it, in the same tick, before they commit', async () => {
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
  tick.join();
  upsert().stage({ k: 'r', v: 5 });
  assert.equal(await db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('r'), 5);
  assert.equal((await upsert().run({ k: 'r', v: 6 })).changes, 1, 'the count of a write is there when asked for');
  await tick.committed();
  assert.equal(await committedValue('r'), 6);
});

test('a tick that fails is rolled back whole: its waiters and onLost are told, and the next tick commits', async () => {
  const lost: unknown[] = [];
  const tick = createTickTransaction(db, (err) => lost.push(err));
  tick.join();
  insert().stage('c', 3);
  insert().stage('a', 9); // the key exists: the tick fails, though nobody looked at this write's result
  await assert.rejects(tick.committed()!, /duplicate key/);
  assert.equal(lost.length, 1);
  assert.equal(await committedValue('c'), undefined, "the tick's other write was rolled back with it");
  tick.join();
  insert().stage('c', 4);
  await tick.committed();
  assert.equal(await committedValue('c'), 4);
});

test('ticks commit in order: a later tick never overtakes a slow one', async () => {
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
  tick.join();
  db.prepare('SELECT pg_sleep(0.2)').stage();
  upsert().stage({ k: 'order', v: 1 });
  const first = tick.committed();
  await tickBoundary();
  tick.join();
  upsert().stage({ k: 'order', v: 2 });
  const second = tick.committed();
  assert.notEqual(first, second);
  await Promise.all([first, second]);
  assert.equal(await committedValue('order'), 2);
});

test('transaction() inside a tick: a throw, a failed write or a failed staged write rolls the whole tick back, and says so', async () => {
  const failures: Array<[string, () => Promise<void>, (err: unknown) => boolean]> = [
    ['a throw', async () => { await upsert().run({ k: 'gone', v: 1 }); throw new Error('changed my mind'); }, (err) => /changed my mind/.test(String(err))],
    ['a failed write', async () => { upsert().stage({ k: 'gone', v: 1 }); await insert().run('kept', 2); }, (err) => err instanceof PostgresError && err.code === '23505'],
    // nobody waits for it: the savepoint's end reports it
    ['a failed staged write', async () => { upsert().stage({ k: 'gone', v: 1 }); insert().stage('kept', 2); }, (err) => err instanceof PostgresError && err.code === '23505'],
  ];
  await insert().run('kept', 1);
  for (const [what, body, expected] of failures) {
    const lost: unknown[] = [];
    const tick = createTickTransaction(db, (err) => lost.push(err));
    tick.join();
    upsert().stage({ k: 'before', v: 1 });
    await assert.rejects(db.transaction(body)(), expected, what);
    await assert.rejects(tick.committed()!, TickAbortedError, what);
    assert.equal(lost.length, 1, what);
    assert.deepEqual(await Promise.all(['before', 'gone'].map(committedValue)), [undefined, undefined], what);
    tick.join();
    upsert().stage({ k: 'after', v: 1 });
    await tick.committed();
    assert.equal(await committedValue('after'), 1, `${what}: the next tick commits`);
    await db.prepare('DELETE FROM t WHERE k = ?').run('after');
  }
});

test("a write another caller made while a transaction waited is not reported kept when the transaction fails", async () => {
  const tick = createTickTransaction(db, () => {});
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  const failing = db.transaction(async () => {
    await upsert().run({ k: 'mine', v: 1 });
    await gate;
    throw new Error('changed my mind');
  })();
  await new Promise((r) => setTimeout(r, 20));
  // another request, in the same tick, while the transaction waits: its write lands in the transaction's savepoint
  const mark = tick.mark();
  upsert().stage({ k: 'theirs', v: 1 });
  const theirs = tick.committedSince(mark)!;
  letGo();
  await assert.rejects(failing, /changed my mind/);
  await assert.rejects(theirs, TickAbortedError);
  assert.deepEqual(await Promise.all(['mine', 'theirs'].map(committedValue)), [undefined, undefined]);
});

test('transaction() outside a tick commits at once, and a failure inside rolls it all back', async () => {
  db.tick = undefined;
  const both = db.transaction(async (v: number) => {
    upsert().stage({ k: 'tx1', v });
    await upsert().run({ k: 'tx2', v });
  });
  await both(7);
  assert.deepEqual([await committedValue('tx1'), await committedValue('tx2')], [7, 7]);
  const broken = db.transaction(async () => {
    await upsert().run({ k: 'tx1', v: 8 });
    await db.prepare('INSERT INTO t (k, v) VALUES (?, NULL)').run('tx3');
  });
  await assert.rejects(broken(), /null value/);
  assert.equal(await committedValue('tx1'), 7);
});

test('transaction() outside a tick, with the tick attached: it commits with its tick before it settles', async () => {
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
  const write = db.transaction(async () => {
    await upsert().run({ k: 'tx-ticked', v: 1 });
  });
  await write();
  assert.equal(await committedValue('tx-ticked'), 1, 'committed once the promise settled');
  assert.equal(tick.committed(), undefined, 'no tick left open');
});

test('two transactions made at once do not interleave: the second begins once the first has ended', async () => {
  const lost: unknown[] = [];
  createTickTransaction(db, (err) => lost.push(err));
  const order: string[] = [];
  const slow = db.transaction(async () => {
    order.push('a begins');
    await db.prepare('SELECT pg_sleep(0.05)').run();
    await upsert().run({ k: 'turn-a', v: 1 });
    order.push('a ends');
  });
  const failing = db.transaction(async () => {
    order.push('b begins');
    await upsert().run({ k: 'turn-b', v: 1 });
    throw new Error('b rolls back');
  });
  const [a, b] = await Promise.allSettled([slow(), failing()]);
  assert.equal(a.status, 'fulfilled');
  assert.equal(b.status, 'rejected');
  assert.deepEqual(order, ['a begins', 'a ends', 'b begins']);
  assert.deepEqual([await committedValue('turn-a'), await committedValue('turn-b')], [1, undefined]);
  assert.deepEqual(lost.map((err) => (err as Error).name), ['TickAbortedError'], "the tick b opened was rolled back, a's committed before it");
});

test('values come back as better-sqlite3 gives them: BIGINT, COUNT and SUM as numbers, bytea as a Buffer', async () => {
  const bytes = Buffer.from([0, 1, 2, 250, 255]);
  await db.prepare('INSERT INTO t (k, v, big, data) VALUES (?, ?, ?, ?)').run('types', 1, 1_790_000_000_123, bytes);
  const row = (await db.prepare('SELECT big, data FROM t WHERE k = ?').get('types')) as { big: number; data: Buffer };
  assert.equal(row.big, 1_790_000_000_123);
  assert.ok(Buffer.isBuffer(row.data));
  assert.deepEqual(row.data, bytes);
  assert.equal(typeof (await db.prepare('SELECT COUNT(*) FROM t').pluck().get()), 'number');
  assert.equal(await db.prepare('SELECT SUM(v) FROM t WHERE k = ?').pluck().get('types'), 1);
  assert.deepEqual(await db.prepare('SELECT k, v FROM t WHERE k = ?').raw().all('types'), [['types', 1]]);
});

test('a statement PostgreSQL refuses rejects outside a transaction, with its SQLSTATE', async () => {
  await assert.rejects(db.prepare('SELECT nope FROM t').all(), (err: unknown) => err instanceof PostgresError && err.code === '42703');
  await assert.rejects(db.prepare('SELECT * FROM t WHERE k = @k').all({}), /missing named parameter "k"/);
});

test("a read that fails inside a tick fails alone: the tick's writes before and after it commit", async () => {
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
  tick.join();
  upsert().stage({ k: 'before-bad-read', v: 1 });
  // a value past INTEGER's range: PostgreSQL refuses the statement (SQLite would find no row)
  await assert.rejects(db.prepare('SELECT k FROM t WHERE v = ?').all(2 ** 40), (err: unknown) => err instanceof PostgresError && err.code === '22003');
  upsert().stage({ k: 'after-bad-read', v: 2 });
  await tick.committed();
  assert.deepEqual([await committedValue('before-bad-read'), await committedValue('after-bad-read')], [1, 2]);
});

test('a text with U+0000, which PostgreSQL cannot hold, is stored with U+FFFD in its place; a lookup with it finds nothing else', async () => {
  await db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run('nul\0in\0text', 1);
  assert.equal(await db.prepare('SELECT k FROM t WHERE k LIKE ?').pluck().get('nul%'), 'nul\uFFFDin\uFFFDtext');
  assert.equal(await db.prepare('SELECT k FROM t WHERE k = ?').pluck().get('a\0'), undefined);
});

/** Ends the daemon's connection from the server's side, as a restart of PostgreSQL does; waits until the store has seen it close. */
async function dropDaemonConnection(): Promise<void> {
  const ended = await reader<Array<{ pid: number }>>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
  assert.equal(ended.length, 1, 'the store holds one connection');
  await reader`SELECT pg_terminate_backend(${ended[0]!.pid})`;
  await new Promise((r) => setTimeout(r, 300));
}

test('a transaction whose connection is lost before its commit is reported failed, and none of its writes is kept, before or after the loss', async () => {
  // begin and commit as the tick uses them, with the loss in between (a tick commits on the next setImmediate)
  db.tick = undefined;
  db.begin();
  insert().stage('lost-before', 1);
  assert.equal(await db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('lost-before'), 1, 'the write ran on the connection');
  await dropDaemonConnection();
  // postgres.js would send this to the new connection, where the transaction is not
  const after = insert().run('lost-after', 2);
  after.catch(() => {}); // looked at below, once the commit has failed
  await assert.rejects(db.commit(), (err: unknown) => err instanceof PostgresError && err.unreachable);
  await assert.rejects(after, (err: unknown) => err instanceof PostgresError && err.unreachable);
  assert.deepEqual([await committedValue('lost-before'), await committedValue('lost-after')], [undefined, undefined]);

  // nothing written after the loss: the COMMIT alone reaches the new connection
  await new Promise((r) => setTimeout(r, 1100)); // the store refuses statements for a second after one could not reach the server
  db.begin();
  insert().stage('lost-alone', 3);
  assert.equal(await db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('lost-alone'), 3);
  await dropDaemonConnection();
  await assert.rejects(db.commit(), (err: unknown) => err instanceof PostgresError && err.unreachable);
  assert.equal(await committedValue('lost-alone'), undefined);

  // the next tick commits on the new connection
  await new Promise((r) => setTimeout(r, 1100));
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
  tick.join();
  insert().stage('after-loss', 4);
  await tick.committed();
  assert.equal(await committedValue('after-loss'), 4);
});

test('a write outside a transaction commits on its own and says so; on a lost connection it fails and is not kept', async () => {
  db.tick = undefined;
  assert.equal((await insert().run('alone', 1)).changes, 1);
  assert.equal(await committedValue('alone'), 1);
  await dropDaemonConnection();
  // the first statement after the loss meets the closed connection or the new one: either way, what it answers is true
  let kept: boolean;
  try {
    await insert().run('alone-after-loss', 2);
    kept = true;
  } catch (err) {
    assert.ok(err instanceof PostgresError && err.unreachable, String(err));
    kept = false;
  }
  assert.equal(await committedValue('alone-after-loss'), kept ? 2 : undefined);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(await db.prepare('SELECT count(*) FROM t WHERE k = ?').pluck().get('alone'), 1, 'the store works on the new connection');
});

test("committedSince: a tick lost after a request's mark fails its wait, though a later tick committed; a later mark does not see it", async () => {
  const tick = createTickTransaction(db, () => {});
  const mark = tick.mark();
  tick.join();
  insert().stage('ledger-lost', 1);
  insert().stage('a', 1); // the key exists: the tick fails
  const first = tick.committed()!;
  await assert.rejects(first, /duplicate key/);
  const laterMark = tick.mark();
  tick.join();
  insert().stage('ledger-after', 2);
  await assert.rejects(tick.committedSince(mark)!, /duplicate key/);
  await tick.committedSince(laterMark);
  assert.deepEqual([await committedValue('ledger-lost'), await committedValue('ledger-after')], [undefined, 2]);
});

test('writeAfter: a write that depends on a tick still committing waits for it, and is never written when that tick is lost', async () => {
  const tick = createTickTransaction(db, () => {});
  const mark = tick.mark();
  tick.join();
  db.prepare('SELECT pg_sleep(0.2)').stage();
  insert().stage('a', 1); // the key exists: the tick fails, after the sleep
  const lost = tick.committed()!;
  lost.catch(() => {});
  await tickBoundary(); // that tick is committing; the next one opens
  tick.join();
  insert().stage('unrelated', 1);
  const dependent = tick.writeAfter(mark, () => insert().stage('dependent', 1));
  assert.ok(dependent, 'it waits for the tick under way');
  await assert.rejects(dependent, /duplicate key/);
  await tick.committed();
  assert.deepEqual([await committedValue('unrelated'), await committedValue('dependent')], [1, undefined]);
});

test('writeAfter: a transaction that waits for its turn (a fenced write) is not written when the tick it depends on, still open, is lost', async () => {
  const tick = createTickTransaction(db, () => {});
  const mark = tick.mark();
  tick.join();
  insert().stage('turn-event', 1);
  insert().stage('a', 1); // the key exists: this tick is lost
  // another transaction holds the turn: a transaction made now only begins once this tick has ended
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  const holding = db.transaction(async () => held)();
  const dependent = tick.writeAfter(mark, () => db.transaction(async () => void (await insert().run('turn-key', 1)))());
  letGo();
  await holding.catch(() => {});
  await assert.rejects(dependent!, /duplicate key/);
  assert.deepEqual([await committedValue('turn-event'), await committedValue('turn-key')], [undefined, undefined]);
});

test('writeAfter: what depends on the open tick goes into a later one, once the open one committed', async () => {
  const commits: number[] = [];
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)), (seconds) => commits.push(seconds));
  const mark = tick.mark();
  tick.join();
  insert().stage('slow-event', 1);
  db.prepare('SELECT pg_sleep(0.2)').stage();
  const after = tick.writeAfter(mark, () => insert().stage('slow-key', 1));
  assert.ok(after);
  await tickBoundary();
  assert.equal(await committedValue('slow-key'), undefined, 'nothing written while the tick it depends on commits');
  await after;
  assert.deepEqual([await committedValue('slow-event'), await committedValue('slow-key')], [1, 1]);
  assert.equal(commits.length, 2, 'the event, then the write that depends on it');
});
