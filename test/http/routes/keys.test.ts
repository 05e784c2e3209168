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
    const keyAdmin = await newKey(['keys:manage', 'sessions:read']);
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

describe('no privilege escalation through API keys (issue 16)', () => {
  const create = (key: string, body: Record<string, unknown>) => daemon.request('POST', '/api/account/keys', { name: 'child', ...body }, key);

  test('a session-limited keys:manage key cannot mint "*" or an unrestricted key', async () => {
    const limited = await newKey(['keys:manage', 'sessions:read'], ['alpha']);
    const star = await create(limited, { scopes: ['*'], sessions: ['alpha'] });
    assert.equal(star.status, 403, JSON.stringify(star.body));
    assert.equal(star.body.error.code, 'FORBIDDEN_SCOPE');
    assert.match(star.body.error.message, /\*/);
    const unrestricted = await create(limited, { scopes: ['sessions:read'] });
    assert.equal(unrestricted.status, 403);
    assert.equal(unrestricted.body.error.code, 'FORBIDDEN_SESSION');
    const wider = await create(limited, { scopes: ['sessions:read'], sessions: ['alpha', 'beta'] });
    assert.equal(wider.status, 403);
    assert.equal(wider.body.error.code, 'FORBIDDEN_SESSION');
    assert.match(wider.body.error.message, /beta/);
  });

  test('a "*" key limited to one session (which includes keys:manage) cannot escape its session either', async () => {
    const starLimited = await newKey(['*'], ['alpha']);
    const free = await create(starLimited, { scopes: ['*'] });
    assert.equal(free.status, 403);
    assert.equal(free.body.error.code, 'FORBIDDEN_SESSION');
    const inside = await create(starLimited, { scopes: ['*'], sessions: ['alpha'] });
    assert.equal(inside.status, 201, JSON.stringify(inside.body));
    const child = inside.body.data.key as string;
    assert.equal((await daemon.request('GET', '/api/sessions/alpha', undefined, child)).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions/beta', undefined, child)).status, 403);
  });

  test('a key cannot grant a scope it lacks', async () => {
    const keyAdmin = await newKey(['keys:manage', 'sessions:read']);
    for (const scopes of [['sessions:manage'], ['sessions:read', 'messages:send'], ['*'], ['webhooks:manage']]) {
      const res = await create(keyAdmin, { scopes });
      assert.equal(res.status, 403, `${scopes} → ${res.status}`);
      assert.equal(res.body.error.code, 'FORBIDDEN_SCOPE');
    }
    const made = await create(keyAdmin, { scopes: ['sessions:read', 'keys:manage'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.data.createdBy, (await daemon.request('GET', '/api/account/keys', undefined, keyAdmin)).body.data[0].createdBy);
  });

  test('a key lists and revokes only the keys it created; the operator\'s and other keys\' keys answer 404', async () => {
    const operatorKey = await daemon.request('POST', '/api/admin/keys', { name: 'operator-app', scopes: ['sessions:read'] });
    const a = await newKey(['keys:manage', 'sessions:read']);
    const b = await newKey(['keys:manage', 'sessions:read']);
    const aChild = await create(a, { name: 'a-child', scopes: ['sessions:read'] });
    const bChild = await create(b, { name: 'b-child', scopes: ['sessions:read'] });
    assert.equal(aChild.status, 201);
    assert.equal(bChild.status, 201);

    const aList = await daemon.request('GET', '/api/account/keys', undefined, a);
    assert.deepEqual(aList.body.data.map((k: { id: string }) => k.id), [aChild.body.data.id]);
    const aId = aList.body.data[0].createdBy as string;
    assert.match(aId, /^[0-9a-f-]{36}$/);

    for (const victim of [operatorKey.body.data.id, bChild.body.data.id, aId]) {
      const res = await daemon.request('DELETE', `/api/account/keys/${victim}`, undefined, a);
      assert.equal(res.status, 404, victim);
      assert.equal(res.body.error.code, 'KEY_NOT_FOUND');
    }
    // all three still work
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, operatorKey.body.data.key)).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, bChild.body.data.key)).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, a)).status, 200);

    // its own child it may revoke
    assert.equal((await daemon.request('DELETE', `/api/account/keys/${aChild.body.data.id}`, undefined, a)).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, aChild.body.data.key)).status, 401);

    // the operator sees every key, with its owner, and revokes any of them, on both routes
    const all = await daemon.request('GET', '/api/admin/keys');
    const byId = new Map(all.body.data.map((k: { id: string }) => [k.id, k]));
    assert.equal((byId.get(operatorKey.body.data.id) as { createdBy: string | null }).createdBy, null);
    assert.equal((byId.get(bChild.body.data.id) as { createdBy: string | null }).createdBy !== null, true);
    const viaAccount = await daemon.request('GET', '/api/account/keys');
    assert.equal(viaAccount.body.data.length, all.body.data.length);
    assert.equal((await daemon.request('DELETE', `/api/account/keys/${bChild.body.data.id}`)).status, 200);
    const made = await daemon.request('POST', '/api/account/keys', { name: 'by-master', scopes: ['*'] });
    assert.equal(made.status, 201);
    assert.equal(made.body.data.createdBy, null);
  });
});

describe('per-key requests-per-minute limit (issue 16)', () => {
  test('a key over its rateLimitPerMinute gets 429 RATE_LIMITED with Retry-After; other keys are not affected', async () => {
    const res = await daemon.request('POST', '/api/admin/keys', { name: 'slow', scopes: ['sessions:read'], rateLimitPerMinute: 3 });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.data.rateLimitPerMinute, 3);
    const slow = res.body.data.key as string;
    const other = await newKey(['sessions:read']);
    for (let i = 0; i < 3; i++) assert.equal((await daemon.request('GET', '/api/sessions', undefined, slow)).status, 200, `request ${i + 1}`);
    const limited = await daemon.request('GET', '/api/sessions', undefined, slow);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, other)).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions')).status, 200, 'the master key has no limit');
    const listed = (await daemon.request('GET', '/api/admin/keys')).body.data.find((k: { id: string }) => k.id === res.body.data.id);
    assert.equal(listed.rateLimitPerMinute, 3);
  });

  test('no limit by default; the field is validated; a limited key cannot mint a looser key', async () => {
    const plain = await daemon.request('POST', '/api/admin/keys', { name: 'plain', scopes: ['sessions:read'] });
    assert.equal(plain.body.data.rateLimitPerMinute, null);
    for (const bad of [0, -1, 1.5, '10', 100_001]) {
      const res = await daemon.request('POST', '/api/admin/keys', { name: 'x', scopes: ['sessions:read'], rateLimitPerMinute: bad });
      assert.equal(res.status, 400, String(bad));
      assert.equal(res.body.error.details[0].path, '/rateLimitPerMinute');
    }
    const parent = await daemon.request('POST', '/api/admin/keys', { name: 'p', scopes: ['keys:manage', 'sessions:read'], rateLimitPerMinute: 50 });
    const key = parent.body.data.key as string;
    for (const rateLimitPerMinute of [null, 51]) {
      const res = await daemon.request('POST', '/api/account/keys', { name: 'c', scopes: ['sessions:read'], rateLimitPerMinute }, key);
      assert.equal(res.status, 403, String(rateLimitPerMinute));
      assert.equal(res.body.error.code, 'FORBIDDEN_SCOPE');
    }
    const inherited = await daemon.request('POST', '/api/account/keys', { name: 'c', scopes: ['sessions:read'] }, key);
    assert.equal(inherited.body.data.rateLimitPerMinute, 50);
    const tighter = await daemon.request('POST', '/api/account/keys', { name: 'c', scopes: ['sessions:read'], rateLimitPerMinute: 5 }, key);
    assert.equal(tighter.body.data.rateLimitPerMinute, 5);
  });
});

describe('revocation reaches open event streams (own review, issue 16)', () => {
  test('revoking a key ends the event streams it has open; other streams go on', async () => {
    const open = async (key: string) => {
      const res = await fetch(`${daemon.url}/api/events/stream`, { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read(); // ": connected"
      return reader;
    };
    const made = await daemon.request('POST', '/api/admin/keys', { name: 'listener', scopes: ['webhooks:manage'] });
    const keep = await newKey(['webhooks:manage']);
    const [leaked, kept] = await Promise.all([open(made.body.data.key), open(keep)]);
    assert.equal((await daemon.request('DELETE', `/api/admin/keys/${made.body.data.id}`)).status, 200);
    // the revoked key's stream ends (or is cut) at once, without waiting for an event or a heartbeat
    const ended = await Promise.race([
      (async () => {
        for (;;) if ((await reader(leaked)).done) return true;
      })().catch(() => true),
      new Promise<boolean>((done) => setTimeout(() => done(false), 5000)),
    ]);
    assert.equal(ended, true, 'the revoked key\'s stream is still open');
    // the other key's stream still carries events
    const next = reader(kept);
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'after-revoke' })).status, 201);
    await daemon.request('POST', '/api/sessions/after-revoke/start');
    const chunk = await next;
    assert.equal(chunk.done, false);
    await kept.cancel();
  });
});

function reader(r: ReadableStreamDefaultReader<Uint8Array>) {
  return r.read();
}
