// The tick transaction on a real database file: a tick's writes commit together, `committed()` settles only once another
// connection can read them, and lost writes (a failed COMMIT, or a transaction SQLite rolled back by itself) reject the
// waiters, are reported, and leave no transaction open behind them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createTickTransaction, openDatabase, type SqliteDb, type TickTransaction } from '../../src/store/db.js';

describe('tick transaction', () => {
  let dir: string;
  let db: SqliteDb;
  let reader: Database.Database;
  let tick: TickTransaction;
  const lost: unknown[] = [];

  const readerCount = () => reader.prepare('SELECT COUNT(*) FROM notes').pluck().get() as number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tick-'));
    db = openDatabase(join(dir, 'gateway.db'));
    await db.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
             CREATE TABLE parents (id INTEGER PRIMARY KEY);
             CREATE TABLE children (parent INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED)`);
    reader = new Database(join(dir, 'gateway.db'), { readonly: true });
    tick = createTickTransaction(db, (err) => lost.push(err));
  });

  after(async () => {
    reader?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has nothing to wait for when no write joined', () => {
    assert.equal(tick.committed(), undefined);
  });

  it('settles committed() once the whole tick is readable from another connection', async () => {
    const before = readerCount();
    // staged (the hot paths' writes) and awaited, both land in the open tick
    tick.join();
    db.prepare('INSERT INTO notes (text) VALUES (?)').stage('first');
    tick.join();
    await db.prepare('INSERT INTO notes (text) VALUES (?)').run('second');
    const committed = tick.committed();
    assert.ok(committed, 'a write is waiting');
    assert.equal(db.inTransaction, true);
    assert.equal(readerCount(), before, 'nothing is visible before the commit');
    await committed;
    assert.equal(db.inTransaction, false);
    assert.equal(readerCount(), before + 2);
    assert.equal(tick.committed(), undefined);
  });

  it('rejects the waiters of a failed COMMIT, reports it and rolls back, so the next tick starts clean', async () => {
    const before = readerCount();
    lost.length = 0;
    tick.join();
    db.prepare('INSERT INTO notes (text) VALUES (?)').stage('lost with its tick');
    await db.prepare('INSERT INTO children (parent) VALUES (?)').run(42); // no parent 42: the deferred check fails at COMMIT
    const committed = tick.committed()!;
    await assert.rejects(committed, /FOREIGN KEY constraint failed/);
    assert.equal(lost.length, 1);
    assert.match(String(lost[0]), /FOREIGN KEY constraint failed/);
    assert.equal(db.inTransaction, false);
    assert.equal(readerCount(), before);

    tick.join();
    db.prepare('INSERT INTO notes (text) VALUES (?)').stage('next tick');
    await tick.committed();
    assert.equal(readerCount(), before + 1);
    assert.equal(lost.length, 1);
  });

  it('rejects the waiters when SQLite has already rolled the transaction back by itself', async () => {
    const before = readerCount();
    lost.length = 0;
    tick.join();
    await db.prepare('INSERT INTO notes (text) VALUES (?)').run('rolled back under the tick');
    const committed = tick.committed()!;
    db.sqlite.exec('ROLLBACK'); // what SQLite does on its own after a full disk or an I/O error
    await assert.rejects(committed, /rolled back by SQLite/);
    assert.equal(lost.length, 1);
    assert.equal(readerCount(), before);
  });
});
