// The session totals health checks and metrics read on every call are cached by the repository: every write that can
// change them (a new session, a status change, a deletion) must show in the next read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { createSessionsRepo } from '../../src/store/sessions.js';

describe('session counts', () => {
  it('follow inserts, status changes and deletions', async () => {
    const db = openDatabase(':memory:');
    const sessions = createSessionsRepo(db, createSecretBox(Buffer.alloc(32, 3)));
    assert.deepEqual(await sessions.counts(), { total: 0, connected: 0 });
    await sessions.insert({ name: 'a', engine: 'sandbox', config: {} });
    await sessions.insert({ name: 'b', engine: 'sandbox', config: {} });
    assert.deepEqual(await sessions.counts(), { total: 2, connected: 0 });
    sessions.setStatus('a', 'CONNECTED', null);
    assert.deepEqual(await sessions.counts(), { total: 2, connected: 1 });
    assert.equal(await sessions.count(), 2);
    sessions.setStatus('a', 'DISCONNECTED', null);
    sessions.setStatus('b', 'CONNECTED', null);
    assert.deepEqual(await sessions.counts(), { total: 2, connected: 1 });
    await sessions.delete('b');
    assert.deepEqual(await sessions.counts(), { total: 1, connected: 0 });
    // what a caller does with the answer does not change the next one
    const answer = await sessions.counts();
    answer.total = 99;
    assert.deepEqual(await sessions.counts(), { total: 1, connected: 0 });
    await db.close();
  });
});

/** `db`, counting the reads of one session row (by name) */
function countingRowReads(db: Db): { db: Db; reads: string[] } {
  const reads: string[] = [];
  const counting = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'prepare') return typeof value === 'function' ? value.bind(target) : value;
      return (text: string) => {
        const statement = target.prepare(text);
        if (!/FROM sessions WHERE name = \?/.test(text)) return statement;
        const get = statement.get.bind(statement);
        return Object.assign(Object.create(statement) as object, { get: (...params: unknown[]) => (reads.push(String(params[0])), get(...params)) });
      };
    },
  });
  return { db: counting, reads };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('session rows read by name', () => {
  const box = createSecretBox(Buffer.alloc(32, 3));

  it('one daemon: kept until a write, and a read that a write overtook is not kept', async () => {
    const { db, reads } = countingRowReads(openDatabase(':memory:'));
    const sessions = createSessionsRepo(db, box);
    await sessions.insert({ name: 'a', engine: 'sandbox', config: {} });
    await sessions.get('a');
    await sessions.get('a');
    await nextTurn();
    assert.equal((await sessions.get('a'))!.status, 'DISCONNECTED');
    assert.equal(reads.length, 1, 'read once, then kept');
    sessions.setStatus('a', 'CONNECTING', 'SCAN_QR');
    // a read under way when a write lands: its row predates the write
    const pending = sessions.get('a');
    sessions.setStatus('a', 'CONNECTED', null);
    assert.equal((await pending)!.status, 'CONNECTING');
    assert.equal((await sessions.get('a'))!.status, 'CONNECTED', 'the overtaken read was not kept');
    await db.close();
  });

  it('a cluster (shared): a row read once within 250 ms, again after a local write and once that time is past', async () => {
    const { db, reads } = countingRowReads(openDatabase(':memory:'));
    const sessions = createSessionsRepo(db, box, { shared: true });
    await sessions.insert({ name: 'a', engine: 'sandbox', config: {} });
    await sessions.insert({ name: 'b', engine: 'sandbox', config: {} });
    const [first, second] = await Promise.all([sessions.get('a'), sessions.get('a')]);
    assert.equal(first, second);
    await sessions.get('a');
    await sessions.get('b');
    assert.deepEqual(reads, ['a', 'b'], 'one read of each row');
    sessions.setStatus('a', 'CONNECTED', null);
    assert.equal((await sessions.get('a'))!.status, 'CONNECTED', 'a local write is seen at once');
    await sessions.get('b');
    assert.deepEqual(reads, ['a', 'b', 'a']);
    await nextTurn();
    await sessions.get('b');
    assert.deepEqual(reads, ['a', 'b', 'a'], 'kept past the turn');
    await new Promise((r) => setTimeout(r, 300));
    await sessions.get('b');
    assert.deepEqual(reads, ['a', 'b', 'a', 'b'], 'another node may have written since: read again once 250 ms are past');
    assert.equal(await sessions.get('missing'), undefined);
    await db.close();
  });
});

