// The auth-state repository on a real migrated database: each keys.set batch is one transaction, clear() and a
// deleted session take only their own rows, and values come back byte for byte.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAuthStateRepo, type AuthStateRepo } from '../../src/store/auth-state.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { isSealed, secretBoxFor } from '../../src/auth/secret-box.js';

describe('auth-state store', () => {
  let dir: string;
  let db: Db;
  let repo: AuthStateRepo;
  let beforeWrites = 0;

  const addSession = (name: string) => {
    const now = new Date().toISOString();
    db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run(name, 'baileys', now, now);
  };
  const box = secretBoxFor({ masterKey: 'svc_master_test_0123456789abcdef0123456789' });
  const sealedRows = (session: string) =>
    db.prepare('SELECT key, value FROM auth_state WHERE session = ? ORDER BY key').all(session) as Array<{ key: string; value: string }>;
  /** the rows as stored, values opened */
  const rows = (session: string) => sealedRows(session).map((r) => ({ key: r.key, value: box.open(r.value, 'auth_state.value') }));

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'auth-state-'));
    db = openDatabase(join(dir, 'gateway.db'));
    repo = createAuthStateRepo(db, box, () => (beforeWrites += 1));
    for (const name of ['alpha', 'beta', 'gamma', 'delta']) addSession(name);
  });

  after(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips values: get, getMany, overwrite, delete by null, isEmpty', () => {
    const store = repo.forSession('alpha');
    assert.equal(store.isEmpty(), true);
    const creds = JSON.stringify({ noiseKey: { private: 'AAEC', public: 'AwQF' }, me: { id: '1555:1@s.whatsapp.net', name: 'Zoë ✓' } });
    const binaryish = '\u0000\u0001\uffff' + 'x'.repeat(70_000);
    store.set({ creds, 'pre-key:1': '{"a":1}', 'session:1555.0': binaryish });
    assert.equal(store.isEmpty(), false);
    assert.equal(store.get('creds'), creds);
    assert.equal(store.get('session:1555.0'), binaryish);
    assert.equal(store.get('missing'), undefined);
    const many = store.getMany(['pre-key:1', 'missing', 'creds']);
    assert.deepEqual([...many.entries()].sort(), [['creds', creds], ['pre-key:1', '{"a":1}']]);

    store.set({ 'pre-key:1': '{"a":2}', 'session:1555.0': null });
    assert.equal(store.get('pre-key:1'), '{"a":2}');
    assert.equal(store.get('session:1555.0'), undefined);
    assert.deepEqual(rows('alpha').map((r) => r.key), ['creds', 'pre-key:1']);
    // another session reads none of it
    assert.equal(repo.forSession('beta').get('creds'), undefined);
    assert.ok(beforeWrites >= 2, 'pending tick writes are committed before credentials are written');
  });

  it('writes a keys.set batch in one transaction: a failing later entry leaves nothing of the batch', () => {
    const store = repo.forSession('beta');
    store.set({ 'pre-key:1': 'old-1', 'pre-key:9': 'old-9' });
    // the third entry of the next batch fails inside SQLite (as a full disk or I/O error would)
    db.exec(`CREATE TRIGGER fail_poison BEFORE INSERT ON auth_state WHEN NEW.key = 'poison'
             BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`);
    try {
      assert.throws(
        () => store.set({ 'pre-key:1': 'new-1', 'pre-key:2': 'new-2', poison: 'x', 'pre-key:3': 'new-3', 'pre-key:9': null }),
        /injected write failure/,
      );
    } finally {
      db.exec('DROP TRIGGER fail_poison');
    }
    assert.deepEqual(rows('beta'), [
      { key: 'pre-key:1', value: 'old-1' },
      { key: 'pre-key:9', value: 'old-9' },
    ]);
    assert.equal(db.inTransaction, false, 'the failed batch was rolled back, not left open');
    assert.equal(db.pragma('synchronous', { simple: true }), 1, 'synchronous is back to NORMAL after the failed durable write');
    // the store still works after the failure
    store.set({ 'pre-key:2': 'new-2' });
    assert.equal(store.get('pre-key:2'), 'new-2');
  });

  it('clear() empties only its own session', () => {
    const gamma = repo.forSession('gamma');
    const delta = repo.forSession('delta');
    gamma.set({ creds: '{"g":1}', 'pre-key:1': 'g1' });
    delta.set({ creds: '{"d":1}', 'pre-key:1': 'd1' });
    const betaBefore = rows('beta');
    gamma.clear();
    assert.equal(gamma.isEmpty(), true);
    assert.deepEqual(rows('gamma'), []);
    assert.deepEqual(rows('delta'), [
      { key: 'creds', value: '{"d":1}' },
      { key: 'pre-key:1', value: 'd1' },
    ]);
    assert.deepEqual(rows('beta'), betaBefore);
  });

  it('deleting the sessions row cascades its auth state away', () => {
    assert.ok(rows('delta').length > 0);
    const betaBefore = rows('beta');
    db.prepare('DELETE FROM sessions WHERE name = ?').run('delta');
    assert.equal(db.prepare('SELECT COUNT(*) FROM auth_state WHERE session = ?').pluck().get('delta'), 0);
    assert.equal(repo.forSession('delta').isEmpty(), true);
    assert.deepEqual(rows('beta'), betaBefore);
  });

  it('refuses auth state for a session that does not exist (foreign key)', () => {
    assert.throws(() => repo.forSession('nobody').set({ creds: '{}' }), /FOREIGN KEY/);
    assert.equal(db.prepare('SELECT COUNT(*) FROM auth_state WHERE session = ?').pluck().get('nobody'), 0);
  });

  it('stores every value sealed: the database holds none of the plaintext', () => {
    addSession('epsilon');
    const store = repo.forSession('epsilon');
    const creds = JSON.stringify({ noiseKey: { private: 'private-noise-key-bytes' }, registrationId: 4242 });
    store.set({ creds });
    const [row] = sealedRows('epsilon');
    assert.equal(isSealed(row!.value), true);
    assert.ok(!row!.value.includes('private-noise-key-bytes'));
    assert.equal(store.get('creds'), creds);
    // a value sealed for another column does not open here
    db.prepare("UPDATE auth_state SET value = ? WHERE session = 'epsilon'").run(box.seal(creds, 'settings.value'));
    assert.throws(() => store.get('creds'), /does not authenticate/);
  });
});
