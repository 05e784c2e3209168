import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';

// What was granted on a session's name must not pass to a later session created with the same name.
let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

test('deleting a session drops it from the keys limited to it and deletes the webhooks filtered to it', async () => {
  for (const name of ['shop', 'other']) assert.equal((await daemon.request('POST', '/api/sessions', { name })).status, 201);
  const made = await daemon.request('POST', '/api/admin/keys', { name: 'tenant', scopes: ['sessions:read', 'webhooks:manage'], sessions: ['shop', 'other'] });
  assert.equal(made.status, 201);
  const tenant: string = made.body.data.key;
  const hook = await daemon.request('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', session: 'shop' }, tenant);
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const unrelated = await daemon.request('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/other', session: 'other' }, tenant);
  assert.equal(unrelated.status, 201);

  assert.equal((await daemon.request('DELETE', '/api/sessions/shop')).status, 200);
  assert.equal((await daemon.request('POST', '/api/sessions', { name: 'shop' })).status, 201);

  const read = await daemon.request('GET', '/api/sessions/shop', undefined, tenant);
  assert.equal(read.status, 403, JSON.stringify(read.body));
  assert.equal(read.body.error.code, 'FORBIDDEN_SESSION');
  assert.equal((await daemon.request('GET', '/api/sessions/other', undefined, tenant)).status, 200);
  assert.equal((await daemon.request('GET', `/api/webhooks/${hook.body.data.id}`)).status, 404);
  assert.equal((await daemon.request('GET', `/api/webhooks/${unrelated.body.data.id}`)).status, 200);
  const keys = await daemon.request('GET', '/api/admin/keys');
  assert.deepEqual(keys.body.data.find((k: { name: string }) => k.name === 'tenant').sessions, ['other']);
});

test('a key whose only session is deleted reaches no session at all, not every session', async () => {
  assert.equal((await daemon.request('POST', '/api/sessions', { name: 'solo' })).status, 201);
  const made = await daemon.request('POST', '/api/admin/keys', { name: 'solo-key', scopes: ['sessions:read'], sessions: ['solo'] });
  const key: string = made.body.data.key;
  assert.equal((await daemon.request('DELETE', '/api/sessions/solo')).status, 200);
  const list = await daemon.request('GET', '/api/sessions', undefined, key);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.data, []);
  assert.equal((await daemon.request('GET', '/api/sessions/other', undefined, key)).status, 403);
});
