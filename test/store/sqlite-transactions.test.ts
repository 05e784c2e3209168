// Issue 29, explicit transactions on the embedded store (sql.ts, sqlite-db.ts): each is a savepoint of the open tick or a
// transaction of its own, two made at once never interleave (one's rollback never takes the other's writes, one's
// release never ends the other's savepoint), and the tick commits only once none is under way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTickTransaction, openDatabase } from '../../src/store/db.js';
import { TickAbortedError } from '../../src/store/sql.js';

function store() {
  const db = openDatabase(':memory:');
  db.sqlite.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  const put = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  const value = (k: string) => db.prepare<number>('SELECT v FROM t WHERE k = ?').pluck().get(k);
  return { db, put, value };
}

test('two transactions made at once run one after the other: the failing one never takes the other\'s writes', async () => {
  const { db, put, value } = store();
  const lost: unknown[] = [];
  const tick = createTickTransaction(db, (err) => lost.push(err));
  const order: string[] = [];
  const kept = db.transaction(async () => {
    order.push('a');
    await put.run('a1', 1);
    await put.run('a2', 2);
    order.push('a done');
  });
  const failing = db.transaction(async () => {
    order.push('b');
    await put.run('b1', 1);
    await put.run('a1', 9); // the key exists
  });
  const [a, b] = await Promise.allSettled([kept(), failing()]);
  assert.equal(a.status, 'fulfilled');
  assert.equal(b.status, 'rejected');
  assert.deepEqual(order, ['a', 'a done', 'b']);
  assert.deepEqual([await value('a1'), await value('a2'), await value('b1')], [1, 2, undefined]);
  assert.deepEqual(lost.map((err) => (err as Error).name), ['TickAbortedError'], "the tick b opened was rolled back, a's committed before it");
  assert.equal(tick.committed(), undefined, 'each committed before it settled: no tick left open');
  assert.equal(db.inTransaction, false);
});

test('inside the open tick a transaction is a savepoint of it, and the tick commits once the transaction has ended', async () => {
  const { db, put, value } = store();
  const tick = createTickTransaction(db, (err) => assert.fail(String(err)));
  tick.join();
  put.stage('before', 1);
  const inside = db.transaction(async () => {
    await put.run('inside', 1);
    // the tick's flush comes due meanwhile (a transaction that waited on the store would see it here)
    tick.flush();
    assert.equal(db.inTransaction, true, 'the tick did not commit in the middle of the transaction');
    await put.run('inside2', 2);
  });
  const committed = tick.committed()!;
  await inside();
  await committed;
  assert.deepEqual([await value('before'), await value('inside'), await value('inside2')], [1, 1, 2]);
  assert.equal(db.inTransaction, false);
});

test("a write another caller made while a transaction waited is not reported kept when the transaction fails: the tick goes", async () => {
  const { db, put, value } = store();
  const lost: unknown[] = [];
  const tick = createTickTransaction(db, (err) => lost.push(err));
  tick.join();
  put.stage('before', 1);
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  const failing = db.transaction(async () => {
    await put.run('mine', 1);
    await gate;
    throw new Error('changed my mind');
  })();
  await new Promise((r) => setImmediate(r));
  // another request while the transaction waits: its write lands in the transaction's savepoint
  const mark = tick.mark();
  put.stage('theirs', 1);
  const theirs = tick.committedSince(mark)!;
  letGo();
  await assert.rejects(failing, /changed my mind/);
  await assert.rejects(theirs, TickAbortedError);
  assert.equal(lost.length, 1);
  assert.deepEqual([await value('before'), await value('mine'), await value('theirs')], [undefined, undefined, undefined]);
  tick.join();
  put.stage('after', 1);
  await tick.committed();
  assert.equal(await value('after'), 1, 'the next tick commits');
});

test('writeAfter: it joins the open tick, and writes nothing once a tick from its mark on was lost', async () => {
  const { db, put, value } = store();
  const tick = createTickTransaction(db, () => {});
  const mark = tick.mark();
  tick.join();
  put.stage('event', 1);
  const joined = tick.writeAfter(mark, () => put.stage('key', 1));
  assert.ok(joined, 'it waits for the commit of the tick it joined');
  assert.equal(await value('key'), 1, 'written into the open tick');
  await joined;
  const lostMark = tick.mark();
  tick.join();
  put.stage('lost-event', 1);
  tick.abort(new Error('the disk is gone'));
  await assert.rejects(tick.committed()!, /the disk is gone/);
  assert.throws(() => tick.writeAfter(lostMark, () => put.stage('lost-key', 1)), /the disk is gone/);
  await tick.committed();
  assert.deepEqual([await value('lost-event'), await value('lost-key')], [undefined, undefined]);
});
