import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await daemon.request('POST', '/api/sessions', { name: 'alpha' });
  await daemon.request('POST', '/api/sessions', { name: 'beta' });
});
after(() => daemon.cleanup());

async function newKey(scopes: string[], sessions?: string[]): Promise<string> {
  const res = await daemon.request('POST', '/api/admin/keys', { name: `k-${scopes.join('-')}`, scopes, ...(sessions ? { sessions } : {}) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.key;
}

describe('authentication', () => {
  test('missing, malformed and unknown keys → 401 UNAUTHORIZED', async () => {
    const none = await daemon.request('GET', '/api/sessions', undefined, null);
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'UNAUTHORIZED');
    const basic = await daemon.request('GET', '/api/sessions', undefined, null, { Authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(basic.status, 401);
    const unknown = await daemon.request('GET', '/api/sessions', undefined, 'svc_not_a_real_key');
    assert.equal(unknown.status, 401);
    const almostMaster = await daemon.request('GET', '/api/sessions', undefined, daemon.masterKey + 'x');
    assert.equal(almostMaster.status, 401);
  });

  test('health needs no key; metrics need the master key', async () => {
    const health = await daemon.request('GET', '/api/health', undefined, null);
    assert.equal(health.status, 200);
    assert.equal(health.body.data.status, 'ok');
    assert.match(health.body.data.version, /^\d+\.\d+\.\d+/);
    assert.equal(typeof health.body.data.uptime, 'number');
    assert.equal(health.body.data.sessions.total, 2);
    const anonymous = await daemon.request('GET', '/metrics', undefined, null);
    assert.equal(anonymous.status, 401);
    const metrics = await daemon.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /gateway_sessions\{state="total"\} 2/);
    assert.match(metrics.body, /gateway_process_resident_memory_bytes/);
    const key = await newKey(['*']);
    assert.equal((await daemon.request('GET', '/metrics', undefined, key)).status, 403);
  });
});

describe('API keys and scopes', () => {
  test('a key is shown once, stored hashed, listed without the secret, and works', async () => {
    const res = await daemon.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['sessions:read'] });
    assert.equal(res.status, 201);
    const { key, id, prefix } = res.body.data;
    assert.match(key, /^svc_[A-Za-z0-9_-]{20,}$/);
    assert.ok(key.startsWith(prefix));
    const list = await daemon.request('GET', '/api/admin/keys');
    const listed = list.body.data.find((k: { id: string }) => k.id === id);
    assert.equal(listed.name, 'reader');
    assert.equal(listed.key, undefined);
    assert.ok(!JSON.stringify(list.body).includes(key));
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, key)).status, 200);
  });

  test('a key without the scope → 403 FORBIDDEN_SCOPE', async () => {
    const reader = await newKey(['sessions:read']);
    const create = await daemon.request('POST', '/api/sessions', { name: 'nope' }, reader);
    assert.equal(create.status, 403);
    assert.equal(create.body.error.code, 'FORBIDDEN_SCOPE');
    const stop = await daemon.request('POST', '/api/sessions/alpha/stop', undefined, reader);
    assert.equal(stop.status, 403);
    const admin = await daemon.request('GET', '/api/admin/keys', undefined, reader);
    assert.equal(admin.status, 403);
    const manager = await newKey(['sessions:manage']);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, manager)).status, 403);
    assert.equal((await daemon.request('POST', '/api/sessions/alpha/stop', undefined, manager)).status, 200);
  });

  test('a key limited to other sessions → 403 FORBIDDEN_SESSION; lists show only its sessions', async () => {
    const limited = await newKey(['sessions:read', 'sessions:manage'], ['alpha']);
    assert.equal((await daemon.request('GET', '/api/sessions/alpha', undefined, limited)).status, 200);
    const other = await daemon.request('GET', '/api/sessions/beta', undefined, limited);
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'FORBIDDEN_SESSION');
    const create = await daemon.request('POST', '/api/sessions', { name: 'gamma' }, limited);
    assert.equal(create.status, 403);
    const list = await daemon.request('GET', '/api/sessions', undefined, limited);
    assert.deepEqual(list.body.data.map((s: { name: string }) => s.name), ['alpha']);
    assert.equal(list.headers.get('x-total-count'), '1');
  });

  test('account keys: keys:manage creates and revokes; a revoked key gets 401', async () => {
    const keyAdmin = await newKey(['keys:manage']);
    const made = await daemon.request('POST', '/api/account/keys', { name: 'app', scopes: ['sessions:read'] }, keyAdmin);
    assert.equal(made.status, 201);
    const appKey = made.body.data.key;
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, appKey)).status, 200);
    const listed = await daemon.request('GET', '/api/account/keys', undefined, keyAdmin);
    assert.ok(listed.body.data.some((k: { id: string }) => k.id === made.body.data.id));
    const revoke = await daemon.request('DELETE', `/api/account/keys/${made.body.data.id}`, undefined, keyAdmin);
    assert.equal(revoke.status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, appKey)).status, 401);
    const again = await daemon.request('DELETE', `/api/account/keys/${made.body.data.id}`, undefined, keyAdmin);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'KEY_NOT_FOUND');
    const noScope = await daemon.request('GET', '/api/account/keys', undefined, appKey);
    assert.equal(noScope.status, 401);
  });

  test('key validation: unknown scope, empty scopes, bad id', async () => {
    const bad = await daemon.request('POST', '/api/admin/keys', { name: 'x', scopes: ['everything'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details[0].path, '/scopes/0');
    const empty = await daemon.request('POST', '/api/admin/keys', { name: 'x', scopes: [] });
    assert.equal(empty.status, 400);
    const badId = await daemon.request('DELETE', '/api/admin/keys/not-a-uuid');
    assert.equal(badId.status, 400);
    assert.equal(badId.body.error.details[0].path, '/id');
  });
});
