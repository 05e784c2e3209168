// Contacts and correspondents are told again by every message received: a write made for the same key within the last
// minute is skipped (RecentWrites). What is forgotten (a logout's clear, a lost tick) is written again at the next message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createContactsRepo } from '../../src/store/contacts.js';
import { openDatabase } from '../../src/store/db.js';
import { RecentWrites } from '../../src/store/recent-writes.js';

test('a key written within the window is not due again; after the window, or once forgotten, it is', () => {
  const recent = new RecentWrites(60_000);
  assert.equal(recent.due('a', 1_000), true);
  assert.equal(recent.due('a', 60_999), false);
  assert.equal(recent.due('b', 2_000), true, 'another key');
  assert.equal(recent.due('a', 61_000), true, 'the window passed');
  recent.forget();
  assert.equal(recent.due('b', 2_001), true, 'forgotten');
});

test('a contact told again within the minute is not written again; after a clear or a lost tick it is', async () => {
  const db = openDatabase(':memory:');
  const now = new Date().toISOString();
  await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('s', 'sandbox', now, now);
  const contacts = createContactsRepo(db);
  const stored = async () => (await contacts.list('s', 10, 0)).map((c) => c.jid);
  const jid = '15550000001@s.whatsapp.net';
  const ids = { phoneNumber: '+15550000001', lid: null };

  contacts.addIfAbsent('s', jid, ids);
  assert.deepEqual(await stored(), [jid]);
  // removed behind the repository's back: within the minute it is not written again
  await db.prepare('DELETE FROM contacts WHERE session = ?').run('s');
  contacts.addIfAbsent('s', jid, ids);
  assert.deepEqual(await stored(), []);
  // what a lost tick may have taken is written again
  contacts.forgetRecentWrites();
  contacts.addIfAbsent('s', jid, ids);
  assert.deepEqual(await stored(), [jid]);
  // a logout's clear forgets too
  await contacts.clear('s');
  contacts.addIfAbsent('s', jid, ids);
  assert.deepEqual(await stored(), [jid]);
});
