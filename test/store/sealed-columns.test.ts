// The whole-table passes over the sealed columns on a real database: plaintext rows sealed once (idempotent), the key
// checked against what is stored, a re-seal all or nothing, and no plaintext left in the file after compaction; the
// row-bound columns (media keys, poll secrets) do not open in another row.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isSealed, secretBoxFor, SecretBoxError } from '../../src/auth/secret-box.js';
import { createAuthStateRepo } from '../../src/store/auth-state.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { checkSealedKey, compactAfterRewrite, resealAll, sealPlaintextRows, SEALED_COLUMNS } from '../../src/store/sealed-columns.js';
import { createSettingsRepo } from '../../src/store/settings.js';
import { createMediaRepo } from '../../src/store/media.js';
import { createMessagesRepo } from '../../src/store/messages.js';

const OLD = secretBoxFor({ masterKey: 'svc_master_sealed_columns_old_0123456789' });
const NEW = secretBoxFor({ masterKey: 'svc_master_sealed_columns_new_0123456789' });
const PLAIN_SECRET = 'plaintext-secret-visible-in-file-0f9e';

describe('sealed columns', () => {
  let dir: string;
  let db: Db;
  const now = new Date().toISOString();
  const allValues = async () =>
    (await Promise.all(SEALED_COLUMNS.map((c) => db.prepare<string>(`SELECT ${c.column} FROM ${c.table} WHERE ${c.column} IS NOT NULL`).pluck().all()))).flat();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sealed-columns-'));
    db = openDatabase(join(dir, 'gateway.db'));
    // the rows as a version before encryption wrote them
    await db.prepare('INSERT INTO sessions (name, engine, proxy, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run('s', 'baileys', `http://u:${PLAIN_SECRET}@h:1`, now, now);
    const insert = db.prepare('INSERT INTO auth_state (session, key, value) VALUES (?, ?, ?)');
    for (let i = 0; i < 500; i++) await insert.run('s', `baileys:pre-key:${i}`, JSON.stringify({ private: `${PLAIN_SECRET}-${i}`, pad: 'x'.repeat(200) }));
    await db.prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run('runtime', JSON.stringify({ s3: { secretAccessKey: PLAIN_SECRET } }));
    await db.prepare(
      `INSERT INTO webhooks (url, events, session, enabled, headers, retry_attempts, retry_delay_seconds, retry_policy, hmac_key, created_at, updated_at)
       VALUES ('http://127.0.0.1:1/h', '[]', NULL, 1, ?, 3, 5, 'exponential', ?, ?, ?)`,
    ).run(JSON.stringify([{ name: 'X-Token', value: PLAIN_SECRET }]), `v1:${PLAIN_SECRET}`, now, now);
  });
  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('seals every plaintext row once; a second pass finds nothing', async () => {
    assert.equal(await checkSealedKey(db, OLD), undefined, 'nothing sealed yet: any key passes');
    const counts = await sealPlaintextRows(db, OLD);
    assert.deepEqual(counts, { 'auth_state.value': 500, 'webhooks.hmac_key': 1, 'webhooks.headers': 1, 'settings.value': 1, 'sessions.proxy': 1 });
    assert.ok((await allValues()).every(isSealed));
    assert.deepEqual(await sealPlaintextRows(db, OLD), {});
    assert.equal(await createAuthStateRepo(db, OLD).forSession('s').get('baileys:pre-key:7'), JSON.stringify({ private: `${PLAIN_SECRET}-7`, pad: 'x'.repeat(200) }));
    assert.deepEqual(await createSettingsRepo(db, OLD).get('runtime'), { s3: { secretAccessKey: PLAIN_SECRET } });
  });

  it('compaction leaves no plaintext in the file', () => {
    compactAfterRewrite(db);
    assert.ok(!readFileSync(join(dir, 'gateway.db')).includes(PLAIN_SECRET));
  });

  it('checks the key: another key is named, the right one passes', async () => {
    assert.equal(await checkSealedKey(db, OLD), undefined);
    assert.deepEqual(await checkSealedKey(db, NEW), { storedKeyId: OLD.keyId, where: 'auth_state.value' });
  });

  it('re-seals all or nothing: a wrong current key changes no row', async () => {
    const before = await allValues();
    await assert.rejects(resealAll(db, NEW, OLD), /not under this key/);
    assert.deepEqual(await allValues(), before);
    assert.equal(db.inTransaction, false, 'the failed pass rolled back and closed its transaction');
    const counts = await resealAll(db, OLD, NEW);
    assert.equal(counts['auth_state.value'], 500);
    assert.equal(await checkSealedKey(db, NEW), undefined);
    assert.ok(await checkSealedKey(db, OLD));
    assert.equal(await createAuthStateRepo(db, NEW).forSession('s').get('baileys:pre-key:499'), JSON.stringify({ private: `${PLAIN_SECRET}-499`, pad: 'x'.repeat(200) }));
  });
});

describe('row-bound sealed columns: media keys, poll secrets, protocol copies', () => {
  const BOX = secretBoxFor({ masterKey: 'svc_master_row_bound_columns_0123456789' });
  const MEDIA_KEY = 'media-key-visible-in-file-7c1d9e';
  const POLL_SECRET = 'cG9sbC1zZWNyZXQtdmlzaWJsZS1pbi1maWxl';
  let db: Db;
  const now = new Date().toISOString();
  const insertMessage = (id: string, secret: string | null, raw: string | null) =>
    db.prepare(
      `INSERT INTO messages (session, chat_id, id, sender, from_me, type, text, media_id, quoted_id, status, secret, extra, raw, timestamp)
       VALUES ('s', 'c@s.whatsapp.net', ?, NULL, 1, 'poll', NULL, NULL, NULL, 'sent', ?, NULL, ?, 1)`,
    ).run(id, secret, raw);
  const insertMedia = (id: string, ref: string | null) =>
    db.prepare(`INSERT INTO media (id, session, message_id, chat_id, mime_type, size, filename, blob, ref, created_at) VALUES (?, 's', 'm1', 'c@s.whatsapp.net', 'image/png', 3, NULL, NULL, ?, ?)`).run(id, ref, now);

  before(async () => {
    db = openDatabase(':memory:');
    await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('s', 'baileys', now, now);
    // as an older version stored them: plaintext
    await insertMessage('m1', POLL_SECRET, JSON.stringify({ key: { id: 'm1' }, message: { messageContextInfo: { messageSecret: POLL_SECRET } } }));
    await insertMedia('f1', JSON.stringify({ mediaKey: MEDIA_KEY }));
  });
  after(() => db?.close());

  it('older plaintext rows are sealed at start, bound to their row, and read back through the repositories', async () => {
    const counts = await sealPlaintextRows(db, BOX);
    assert.deepEqual([counts['media.ref'], counts['messages.secret'], counts['messages.raw']], [1, 1, 1]);
    const stored = [
      ...(await db.prepare<string>('SELECT ref FROM media').pluck().all()),
      ...(await db.prepare<string>('SELECT secret FROM messages UNION ALL SELECT raw FROM messages').pluck().all()),
    ];
    assert.equal(stored.length, 3);
    for (const value of stored) {
      assert.match(value, /^v2:/);
      assert.ok(!value.includes(MEDIA_KEY) && !value.includes(POLL_SECRET));
    }
    assert.deepEqual(JSON.parse((await createMediaRepo(db, BOX).get('f1'))!.ref!), { mediaKey: MEDIA_KEY });
    const message = (await createMessagesRepo(db, BOX).find('s', 'm1', 'c@s.whatsapp.net'))!;
    assert.equal(message.secret, POLL_SECRET);
    assert.equal(JSON.parse(message.raw!).message.messageContextInfo.messageSecret, POLL_SECRET);
    assert.equal(await checkSealedKey(db, BOX), undefined);
  });

  it('new rows are sealed on write; a sealed value copied into another row does not open there', async () => {
    const media = createMediaRepo(db, BOX);
    const messages = createMessagesRepo(db, BOX);
    media.insert({ id: 'f2', session: 's', messageId: 'm2', chatId: 'c@s.whatsapp.net', mimeType: 'image/png', size: 3, filename: null, blob: null, ref: '{"mediaKey":"other"}', createdAt: now });
    messages.insert({ session: 's', chatId: 'c@s.whatsapp.net', id: 'm2', sender: null, fromMe: true, type: 'poll', text: null, mediaId: null, quotedId: null, status: 'sent', secret: 'b3RoZXI=', extra: null, raw: '{"key":{"id":"m2"}}', timestamp: 2 });
    assert.match((await db.prepare<string>("SELECT ref FROM media WHERE id = 'f2'").pluck().get())!, /^v2:/);
    assert.equal((await media.get('f2'))!.ref, '{"mediaKey":"other"}');

    // f1's sealed media key pasted into f2, m1's secret and copy into m2: none opens in its new row
    await db.prepare("UPDATE media SET ref = (SELECT ref FROM media WHERE id = 'f1') WHERE id = 'f2'").run();
    await assert.rejects(media.get('f2'), SecretBoxError);
    await db.prepare("UPDATE messages SET secret = (SELECT secret FROM messages WHERE id = 'm1') WHERE id = 'm2'").run();
    await assert.rejects(messages.find('s', 'm2', 'c@s.whatsapp.net'), SecretBoxError);
    await db.prepare("UPDATE messages SET secret = NULL, raw = (SELECT raw FROM messages WHERE id = 'm1') WHERE id = 'm2'").run();
    await assert.rejects(messages.find('s', 'm2', 'c@s.whatsapp.net'), SecretBoxError);
    // turned into a column-bound (v1) value, it does not open either: its additional data named the row
    const rowBound = (await db.prepare<string>("SELECT ref FROM media WHERE id = 'f1'").pluck().get())!;
    await db.prepare("UPDATE media SET ref = ? WHERE id = 'f2'").run(`v1:${rowBound.slice(3)}`);
    await assert.rejects(media.get('f2'), SecretBoxError);
    // in its own row it still opens
    assert.deepEqual(JSON.parse((await media.get('f1'))!.ref!), { mediaKey: MEDIA_KEY });
  });

  it('a value sealed before values were bound to rows (column context only) still opens', async () => {
    await db.prepare("UPDATE media SET ref = ? WHERE id = 'f2'").run(BOX.seal('{"mediaKey":"legacy"}', 'media.ref'));
    assert.equal((await createMediaRepo(db, BOX).get('f2'))!.ref, '{"mediaKey":"legacy"}');
  });

  it('rotating the key re-seals them bound to their rows', async () => {
    await db.prepare("DELETE FROM messages WHERE id = 'm2'").run();
    const other = secretBoxFor({ masterKey: 'svc_master_row_bound_columns_rotated_01' });
    await resealAll(db, BOX, other);
    assert.match((await db.prepare<string>("SELECT ref FROM media WHERE id = 'f2'").pluck().get())!, /^v2:/, 'the legacy value is bound to its row now');
    assert.equal((await createMediaRepo(db, other).get('f2'))!.ref, '{"mediaKey":"legacy"}');
    assert.equal((await createMessagesRepo(db, other).find('s', 'm1'))!.secret, POLL_SECRET);
    assert.equal(await checkSealedKey(db, other), undefined);
    assert.deepEqual((await checkSealedKey(db, BOX))?.storedKeyId, other.keyId);
  });
});
