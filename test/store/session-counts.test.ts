// The session totals health checks and metrics read on every call are cached by the repository: every write that can
// change them (a new session, a status change, a deletion) must show in the next read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { openDatabase } from '../../src/store/db.js';
import { createSessionsRepo } from '../../src/store/sessions.js';

describe('session counts', () => {
  it('follow inserts, status changes and deletions', () => {
    const db = openDatabase(':memory:');
    const sessions = createSessionsRepo(db, createSecretBox(Buffer.alloc(32, 3)));
    assert.deepEqual(sessions.counts(), { total: 0, connected: 0 });
    sessions.insert({ name: 'a', engine: 'sandbox', config: {} });
    sessions.insert({ name: 'b', engine: 'sandbox', config: {} });
    assert.deepEqual(sessions.counts(), { total: 2, connected: 0 });
    sessions.setStatus('a', 'CONNECTED', null);
    assert.deepEqual(sessions.counts(), { total: 2, connected: 1 });
    assert.equal(sessions.count(), 2);
    sessions.setStatus('a', 'DISCONNECTED', null);
    sessions.setStatus('b', 'CONNECTED', null);
    assert.deepEqual(sessions.counts(), { total: 2, connected: 1 });
    sessions.delete('b');
    assert.deepEqual(sessions.counts(), { total: 1, connected: 0 });
    // what a caller does with the answer does not change the next one
    const answer = sessions.counts();
    answer.total = 99;
    assert.deepEqual(sessions.counts(), { total: 1, connected: 0 });
    db.close();
  });
});
