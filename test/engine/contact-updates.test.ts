// The per-session memory of reported contacts that keeps contact.update to real changes (src/engine/contact-updates.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContactUpdates } from '../../src/engine/contact-updates.js';

const ids = { id: '15550000002@s.whatsapp.net', phoneNumber: '+15550000002', lid: '99@lid' };

test('the same facts again are no change, a new or changed field is; fields are merged, not replaced', () => {
  const updates = new ContactUpdates();
  assert.equal(updates.changes(ids), true);
  assert.equal(updates.changes({ ...ids }), false);
  assert.equal(updates.changes({ ...ids, name: 'Carol' }), true);
  // the LID mapping alone, after a fuller update: says nothing new
  assert.equal(updates.changes(ids), false);
  assert.equal(updates.changes({ ...ids, name: 'Carol' }), false);
  assert.equal(updates.changes({ ...ids, name: 'Caroline' }), true);
  assert.equal(updates.changes({ ...ids, pictureUrl: null }), true);
  assert.equal(updates.changes({ ...ids, pictureUrl: null }), false);
  assert.equal(updates.changes({ ...ids, id: '15550000003@s.whatsapp.net' }), true);
});

test('bounded: past its size the least recently updated contact is forgotten (and reported again)', () => {
  const updates = new ContactUpdates(2);
  for (const id of ['a', 'b', 'c']) assert.equal(updates.changes({ id }), true);
  assert.equal(updates.changes({ id: 'c' }), false);
  assert.equal(updates.changes({ id: 'a' }), true);
});
