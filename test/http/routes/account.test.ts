// GET /api/account: who the calling key is (the console hides what a key may not do from it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon?.cleanup());

test('the master key is the master, with every scope and every session', async () => {
  const res = await daemon.request('GET', '/api/account');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, { kind: 'master', id: null, name: null, scopes: ['*'], sessions: null, rateLimitPerMinute: null });
});

test('an API key sees its own id, name, scopes, sessions and limit, and nothing secret', async () => {
  await daemon.request('POST', '/api/sessions', { name: 'mine', engine: 'sandbox' });
  const created = await daemon.request('POST', '/api/admin/keys', { name: 'limited', scopes: ['sessions:read', 'messages:send'], sessions: ['mine'], rateLimitPerMinute: 50 });
  assert.equal(created.status, 201);
  const res = await daemon.request('GET', '/api/account', undefined, created.body.data.key);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, { kind: 'key', id: created.body.data.id, name: 'limited', scopes: ['sessions:read', 'messages:send'], sessions: ['mine'], rateLimitPerMinute: 50 });
  // any key may ask, whatever its scopes
  const narrow = await daemon.request('POST', '/api/admin/keys', { name: 'narrow', scopes: ['media:read'] });
  const own = await daemon.request('GET', '/api/account', undefined, narrow.body.data.key);
  assert.equal(own.status, 200);
  assert.deepEqual(own.body.data.scopes, ['media:read']);
  assert.equal(own.body.data.sessions, null);
});

test('no key is 401; a revoked key is 401; a client token is refused', async () => {
  assert.equal((await daemon.request('GET', '/api/account', undefined, null)).status, 401);
  const created = await daemon.request('POST', '/api/admin/keys', { name: 'gone', scopes: ['sessions:read'] });
  await daemon.request('DELETE', `/api/admin/keys/${created.body.data.id}`);
  assert.equal((await daemon.request('GET', '/api/account', undefined, created.body.data.key)).status, 401);
  await pairedSession(daemon, 'tokened', '+15550600001');
  await daemon.request('PUT', '/api/sessions/tokened/client-rules', { recipientMode: 'any', allowedActions: 'send_message' });
  const token = (await daemon.request('POST', '/api/client-tokens', { session: 'tokened', ephemeralId: 'visitor' })).body.data.token;
  const refused = await daemon.request('GET', '/api/account', undefined, token);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.code, 'ACTION_NOT_ALLOWED');
});
