// GET /api/sessions/{session}/messages: the messages the store holds, newest first, paged, per session, within the key's sessions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'alice', '+15550700001');
  await pairedSession(daemon, 'bob', '+15550700002');
});
after(() => daemon?.cleanup());

test('sent and received messages, newest first, with paging and X-Total-Count', async () => {
  const ids: string[] = [];
  for (const text of ['one', 'two', 'three']) {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'alice', chatId: '+15550700002', type: 'text', text });
    assert.equal(sent.status, 200);
    ids.push(sent.body.data.messageId);
    // distinct timestamps, so that "newest first" is well defined
    await new Promise((done) => setTimeout(done, 5));
  }
  const all = await daemon.request('GET', '/api/sessions/alice/messages');
  assert.equal(all.status, 200);
  assert.equal(all.headers.get('x-total-count'), '3');
  assert.deepEqual(all.body.data.map((m: any) => m.messageId), [...ids].reverse());
  const newest = all.body.data[0];
  assert.equal(newest.text, 'three');
  assert.equal(newest.fromMe, true);
  assert.equal(newest.type, 'text');
  assert.equal(newest.chatId, '15550700002@s.whatsapp.net');
  assert.match(newest.timestamp, /^\d{4}-\d\d-\d\dT.*Z$/);
  assert.ok(['sent', 'delivered', 'read'].includes(newest.status));

  const page = await daemon.request('GET', '/api/sessions/alice/messages?limit=1&offset=1');
  assert.deepEqual(page.body.data.map((m: any) => m.messageId), [ids[1]]);
  assert.equal(page.headers.get('x-total-count'), '3');

  // bob received them: his own list, marked received
  const received = await waitFor(async () => {
    const res = await daemon.request('GET', '/api/sessions/bob/messages');
    return res.body.data.length === 3 ? res.body.data : undefined;
  }, 10_000, 'bob to store the three messages');
  assert.ok(received.every((m: any) => m.fromMe === false && m.status === 'received'));
});

test('an unknown session is 404; a key limited to another session is 403; bad paging is 400', async () => {
  const unknown = await daemon.request('GET', '/api/sessions/nobody/messages');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'SESSION_NOT_FOUND');
  const key = (await daemon.request('POST', '/api/admin/keys', { name: 'bob only', scopes: ['sessions:read'], sessions: ['bob'] })).body.data.key;
  const forbidden = await daemon.request('GET', '/api/sessions/alice/messages', undefined, key);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.body.error.code, 'FORBIDDEN_SESSION');
  assert.equal((await daemon.request('GET', '/api/sessions/bob/messages', undefined, key)).status, 200);
  const bad = await daemon.request('GET', '/api/sessions/alice/messages?limit=0');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
});
