// The auth-state repository on a real migrated database: each keys.set batch is one transaction, clear() and a
// deleted session take only their own rows, and values come back byte for byte.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAuthStateRepo, type AuthStateRepo } from '../../src/store/auth-state.js';
import Database from 'better-sqlite3';
import { createTickTransaction, openDatabase, type SqliteDb } from '../../src/store/db.js';
import { isSealed, secretBoxFor } from '../../src/auth/secret-box.js';

describe('auth-state store', () => {
  let dir: string;
  let db: SqliteDb;
  let repo: AuthStateRepo;
  let beforeWrites = 0;

  const addSession = async (name: string) => {
    const now = new Date().toISOString();
    await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run(name, 'baileys', now, now);
  };
  const box = secretBoxFor({ masterKey: 'svc_master_test_0123456789abcdef0123456789' });
  const sealedRows = (session: string) => db.prepare<{ key: string; value: string }>('SELECT key, value FROM auth_state WHERE session = ? ORDER BY key').all(session);
  /** the rows as stored, values opened */
  const rows = async (session: string) => (await sealedRows(session)).map((r) => ({ key: r.key, value: box.open(r.value, 'auth_state.value') }));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'auth-state-'));
    db = openDatabase(join(dir, 'gateway.db'));
    repo = createAuthStateRepo(db, box, () => (beforeWrites += 1));
    for (const name of ['alpha', 'beta', 'gamma', 'delta']) await addSession(name);
  });

  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips values: get, getMany, overwrite, delete by null, isEmpty', async () => {
    const store = repo.forSession('alpha');
    assert.equal(await store.isEmpty(), true);
    const creds = JSON.stringify({ noiseKey: { private: 'AAEC', public: 'AwQF' }, me: { id: '1555:1@s.whatsapp.net', name: 'Zoë ✓' } });
    const binaryish = '\u0000\u0001\uffff' + 'x'.repeat(70_000);
    await store.set({ creds, 'pre-key:1': '{"a":1}', 'session:1555.0': binaryish });
    assert.equal(await store.isEmpty(), false);
    assert.equal(await store.get('creds'), creds);
    assert.equal(await store.get('session:1555.0'), binaryish);
    assert.equal(await store.get('missing'), undefined);
    const many = await store.getMany(['pre-key:1', 'missing', 'creds']);
    assert.deepEqual([...many.entries()].sort(), [['creds', creds], ['pre-key:1', '{"a":1}']]);
    assert.equal((await store.getMany([])).size, 0);
    // keys that need quoting in JSON, and many of them in one read
    const odd = { 'pre-key:"q"\\': 'quoted', 'sender-key:g@g.us::1555_1::0': 'sk', 'ünïcode:✓': 'u' };
    await store.set(odd);
    const wanted = [...Object.keys(odd), ...Array.from({ length: 1500 }, (_, i) => `pre-key:${i + 1000}`)];
    assert.deepEqual(Object.fromEntries(await store.getMany(wanted)), odd);
    await store.set(Object.fromEntries(Object.keys(odd).map((k) => [k, null])));

    await store.set({ 'pre-key:1': '{"a":2}', 'session:1555.0': null });
    assert.equal(await store.get('pre-key:1'), '{"a":2}');
    assert.equal(await store.get('session:1555.0'), undefined);
    assert.deepEqual((await rows('alpha')).map((r) => r.key), ['creds', 'pre-key:1']);
    // another session reads none of it
    assert.equal(await repo.forSession('beta').get('creds'), undefined);
    assert.ok(beforeWrites >= 2, 'pending tick writes are committed before credentials are written');
  });

  it('writes a keys.set batch in one transaction: a failing later entry leaves nothing of the batch', async () => {
    const store = repo.forSession('beta');
    await store.set({ 'pre-key:1': 'old-1', 'pre-key:9': 'old-9' });
    // the third entry of the next batch fails inside SQLite (as a full disk or I/O error would)
    await db.exec(`CREATE TRIGGER fail_poison BEFORE INSERT ON auth_state WHEN NEW.key = 'poison'
             BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`);
    try {
      await assert.rejects(
        store.set({ 'pre-key:1': 'new-1', 'pre-key:2': 'new-2', poison: 'x', 'pre-key:3': 'new-3', 'pre-key:9': null }),
        /injected write failure/,
      );
    } finally {
      await db.exec('DROP TRIGGER fail_poison');
    }
    assert.deepEqual(await rows('beta'), [
      { key: 'pre-key:1', value: 'old-1' },
      { key: 'pre-key:9', value: 'old-9' },
    ]);
    assert.equal(db.inTransaction, false, 'the failed batch was rolled back, not left open');
    assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 1, 'synchronous is back to NORMAL after the failed durable write');
    // the store still works after the failure
    await store.set({ 'pre-key:2': 'new-2' });
    assert.equal(await store.get('pre-key:2'), 'new-2');
  });

  it('clear() empties only its own session', async () => {
    const gamma = repo.forSession('gamma');
    const delta = repo.forSession('delta');
    await gamma.set({ creds: '{"g":1}', 'pre-key:1': 'g1' });
    await delta.set({ creds: '{"d":1}', 'pre-key:1': 'd1' });
    const betaBefore = await rows('beta');
    await gamma.clear();
    assert.equal(await gamma.isEmpty(), true);
    assert.deepEqual(await rows('gamma'), []);
    assert.deepEqual(await rows('delta'), [
      { key: 'creds', value: '{"d":1}' },
      { key: 'pre-key:1', value: 'd1' },
    ]);
    assert.deepEqual(await rows('beta'), betaBefore);
  });

  it('deleting the sessions row cascades its auth state away', async () => {
    assert.ok((await rows('delta')).length > 0);
    const betaBefore = await rows('beta');
    await db.prepare('DELETE FROM sessions WHERE name = ?').run('delta');
    assert.equal(await db.prepare('SELECT COUNT(*) FROM auth_state WHERE session = ?').pluck().get('delta'), 0);
    assert.equal(await repo.forSession('delta').isEmpty(), true);
    assert.deepEqual(await rows('beta'), betaBefore);
  });

  it('refuses auth state for a session that does not exist (foreign key)', async () => {
    await assert.rejects(repo.forSession('nobody').set({ creds: '{}' }), /FOREIGN KEY/);
    assert.equal(await db.prepare('SELECT COUNT(*) FROM auth_state WHERE session = ?').pluck().get('nobody'), 0);
  });

  it('stores every value sealed: the database holds none of the plaintext', async () => {
    await addSession('epsilon');
    const store = repo.forSession('epsilon');
    const creds = JSON.stringify({ noiseKey: { private: 'private-noise-key-bytes' }, registrationId: 4242 });
    await store.set({ creds });
    const [row] = await sealedRows('epsilon');
    assert.equal(isSealed(row!.value), true);
    assert.ok(!row!.value.includes('private-noise-key-bytes'));
    assert.equal(await store.get('creds'), creds);
    // a value sealed for another column does not open here
    await db.prepare("UPDATE auth_state SET value = ? WHERE session = 'epsilon'").run(box.seal(creds, 'settings.value'));
    await assert.rejects(store.get('creds'), /does not authenticate/);
  });
});

describe('auth-state store beside the tick transaction', () => {
  const box = secretBoxFor({ masterKey: 'svc_master_test_0123456789abcdef0123456789' });
  it('a credential write settles once it is committed, even while event writes keep a tick open; staged keys commit with the tick', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-state-tick-'));
    const file = join(dir, 'gateway.db');
    const db = openDatabase(file);
    const lost: unknown[] = [];
    const tick = createTickTransaction(db, (err) => lost.push(err));
    const repo = createAuthStateRepo(db, box, tick.flush, undefined, tick.join);
    const reader = new Database(file, { readonly: true });
    const committedRows = () => reader.prepare('SELECT key FROM auth_state WHERE session = ? ORDER BY key').pluck().all('zeta');
    try {
      const now = new Date().toISOString();
      const addSession = db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)');
      tick.join();
      addSession.stage('zeta', 'baileys', now, now);
      const store = repo.forSession('zeta');
      const write = store.set({ creds: 'c1' });
      // event writes of the same turn, after the call and before its transaction ran
      tick.join();
      addSession.stage('eta', 'baileys', now, now);
      await write;
      assert.equal(db.inTransaction, false, 'the credentials were committed, not left in an open tick');
      assert.deepEqual(committedRows(), ['creds'], 'visible to another connection once set() settled');

      tick.join();
      store.stage({ 'session:1.0': 's1' });
      assert.deepEqual(committedRows(), ['creds'], 'staged keys wait for the tick');
      assert.equal(await store.get('session:1.0'), 's1', 'and read back before it commits');
      const committed = tick.committed();
      tick.flush();
      await committed;
      assert.deepEqual(committedRows(), ['creds', 'session:1.0']);
      assert.deepEqual(lost, []);
    } finally {
      reader.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in a cluster, staged keys wait for the lease check: fenced off, nothing of them is written and the caller is told, while the tick commits the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-state-fence-'));
    const file = join(dir, 'gateway.db');
    const db = openDatabase(file);
    const tick = createTickTransaction(db, () => {});
    let leaseHeld = true;
    const fenced: string[] = [];
    const repo = createAuthStateRepo(db, box, tick.flush, async (session) => {
      fenced.push(session);
      return leaseHeld ? undefined : new Error(`stale lease of ${session}`);
    }, tick.join);
    const reader = new Database(file, { readonly: true });
    const committedRows = () => reader.prepare('SELECT key FROM auth_state WHERE session = ? ORDER BY key').pluck().all('theta');
    try {
      const now = new Date().toISOString();
      await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('theta', 'baileys', now, now);
      const store = repo.forSession('theta');
      const first = store.stage({ 'session:1.0': 'kept' });
      assert.ok(first instanceof Promise, 'a fenced stage is a promise');
      await first;
      leaseHeld = false;
      const second = store.stage({ 'session:2.0': 'fenced off' });
      await assert.rejects(second!, /stale lease of theta/);
      // a refusal is no failure of the transaction: the tick, and whatever others wrote into it, commits
      const committed = tick.committed()!;
      tick.flush();
      await committed;
      assert.deepEqual(committedRows(), ['session:1.0']);
      assert.deepEqual(fenced, ['theta', 'theta']);
    } finally {
      reader.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
