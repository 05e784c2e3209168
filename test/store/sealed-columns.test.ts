// The whole-table passes over the sealed columns on a real database: plaintext rows sealed once (idempotent), the key
// checked against what is stored, a re-seal all or nothing, and no plaintext left in the file after compaction.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isSealed, secretBoxFor } from '../../src/auth/secret-box.js';
import { createAuthStateRepo } from '../../src/store/auth-state.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { checkSealedKey, compactAfterRewrite, resealAll, sealPlaintextRows, SEALED_COLUMNS } from '../../src/store/sealed-columns.js';
import { createSettingsRepo } from '../../src/store/settings.js';

const OLD = secretBoxFor({ masterKey: 'svc_master_sealed_columns_old_0123456789' });
const NEW = secretBoxFor({ masterKey: 'svc_master_sealed_columns_new_0123456789' });
const PLAIN_SECRET = 'plaintext-secret-visible-in-file-0f9e';

describe('sealed columns', () => {
  let dir: string;
  let db: Db;
  const now = new Date().toISOString();
  const allValues = () =>
    SEALED_COLUMNS.flatMap((c) => db.prepare(`SELECT ${c.column} FROM ${c.table} WHERE ${c.column} IS NOT NULL`).pluck().all() as string[]);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sealed-columns-'));
    db = openDatabase(join(dir, 'gateway.db'));
    // the rows as a version before encryption wrote them
    db.prepare('INSERT INTO sessions (name, engine, proxy, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run('s', 'baileys', `http://u:${PLAIN_SECRET}@h:1`, now, now);
    const insert = db.prepare('INSERT INTO auth_state (session, key, value) VALUES (?, ?, ?)');
    for (let i = 0; i < 500; i++) insert.run('s', `baileys:pre-key:${i}`, JSON.stringify({ private: `${PLAIN_SECRET}-${i}`, pad: 'x'.repeat(200) }));
    db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('runtime', JSON.stringify({ s3: { secretAccessKey: PLAIN_SECRET } }));
    db.prepare(
      `INSERT INTO webhooks (url, events, session, enabled, headers, retry_attempts, retry_delay_seconds, retry_policy, hmac_key, created_at, updated_at)
       VALUES ('http://127.0.0.1:1/h', '[]', NULL, 1, ?, 3, 5, 'exponential', ?, ?, ?)`,
    ).run(JSON.stringify([{ name: 'X-Token', value: PLAIN_SECRET }]), `v1:${PLAIN_SECRET}`, now, now);
  });
  after(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('seals every plaintext row once; a second pass finds nothing', () => {
    assert.equal(checkSealedKey(db, OLD), undefined, 'nothing sealed yet: any key passes');
    const counts = sealPlaintextRows(db, OLD);
    assert.deepEqual(counts, { 'auth_state.value': 500, 'webhooks.hmac_key': 1, 'webhooks.headers': 1, 'settings.value': 1, 'sessions.proxy': 1 });
    assert.ok(allValues().every(isSealed));
    assert.deepEqual(sealPlaintextRows(db, OLD), {});
    assert.equal(createAuthStateRepo(db, OLD).forSession('s').get('baileys:pre-key:7'), JSON.stringify({ private: `${PLAIN_SECRET}-7`, pad: 'x'.repeat(200) }));
    assert.deepEqual(createSettingsRepo(db, OLD).get('runtime'), { s3: { secretAccessKey: PLAIN_SECRET } });
  });

  it('compaction leaves no plaintext in the file', () => {
    compactAfterRewrite(db);
    assert.ok(!readFileSync(join(dir, 'gateway.db')).includes(PLAIN_SECRET));
  });

  it('checks the key: another key is named, the right one passes', () => {
    assert.equal(checkSealedKey(db, OLD), undefined);
    assert.deepEqual(checkSealedKey(db, NEW), { storedKeyId: OLD.keyId, where: 'auth_state.value' });
  });

  it('re-seals all or nothing: a wrong current key changes no row', () => {
    const before = allValues();
    assert.throws(() => resealAll(db, NEW, OLD), /not under this key/);
    assert.deepEqual(allValues(), before);
    const counts = resealAll(db, OLD, NEW);
    assert.equal(counts['auth_state.value'], 500);
    assert.equal(checkSealedKey(db, NEW), undefined);
    assert.ok(checkSealedKey(db, OLD));
    assert.equal(createAuthStateRepo(db, NEW).forSession('s').get('baileys:pre-key:499'), JSON.stringify({ private: `${PLAIN_SECRET}-499`, pad: 'x'.repeat(200) }));
  });
});
