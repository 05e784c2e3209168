// `gateway keys`: create (printed once), list, revoke against a real daemon; a revoked key gets 401.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor } from '../helpers/cli.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);

interface KeyJson {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  sessions: string[] | null;
  key?: string;
}

describe('gateway keys', { concurrency: true }, () => {
  test('create prints the key once; list hides it; revoke makes the daemon answer 401', async () => {
    const [human, json] = await Promise.all([
      gateway('keys', 'create', 'reader', '--scopes', 'sessions:read,messages:send'),
      gateway('--json', 'keys', 'create', 'scoped', '--scopes', 'sessions:manage', '--sessions', 'alpha, beta'),
    ]);

    assert.equal(human.code, 0, human.stderr);
    const printed = human.stdout.match(/svc_[A-Za-z0-9_-]{20,}/g) ?? [];
    assert.equal(printed.length, 1, human.stdout);
    const readerKey = printed[0]!;
    assert.match(human.stdout, /not be shown again/);
    assert.match(human.stdout, /sessions:read, messages:send/);
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, readerKey)).status, 200);

    assert.equal(json.code, 0, json.stderr);
    const scoped = JSON.parse(json.stdout) as KeyJson;
    assert.match(scoped.key ?? '', /^svc_/);
    assert.equal(scoped.name, 'scoped');
    assert.deepEqual(scoped.scopes, ['sessions:manage']);
    assert.deepEqual(scoped.sessions, ['alpha', 'beta']);
    assert.equal(scoped.prefix, scoped.key!.slice(0, 10));

    const [list, table] = await Promise.all([gateway('--json', 'keys', 'list'), gateway('keys', 'list')]);
    assert.equal(list.code, 0, list.stderr);
    const keys = JSON.parse(list.stdout) as KeyJson[];
    assert.deepEqual(keys.map((k) => k.name).sort(), ['reader', 'scoped']);
    for (const k of keys) assert.equal(k.key, undefined);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /reader/);
    assert.ok(!table.stdout.includes(readerKey));

    const reader = keys.find((k) => k.name === 'reader')!;
    const revoked = await gateway('keys', 'revoke', reader.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /revoked/);
    const denied = await daemon.request('GET', '/api/sessions', undefined, readerKey);
    assert.equal(denied.status, 401);
    const left = JSON.parse((await gateway('--json', 'keys', 'list')).stdout) as KeyJson[];
    assert.deepEqual(left.map((k) => k.name), ['scoped']);
  });

  test('daemon errors come through as one line: unknown scope, unknown key', async () => {
    const [bad, missing] = await Promise.all([
      gateway('keys', 'create', 'x', '--scopes', 'everything'),
      gateway('keys', 'revoke', '00000000-0000-4000-8000-000000000000'),
    ]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: VALIDATION_FAILED: .*scopes/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: KEY_NOT_FOUND: /);
  });
});

describe('gateway keys create --rate-limit (issue 16)', () => {
  test('--rate-limit sets rateLimitPerMinute; list shows the limit and the owner', async () => {
    const made = await gateway('--json', 'keys', 'create', 'limited', '--scopes', 'sessions:read', '--rate-limit', '120');
    assert.equal(made.code, 0, made.stderr);
    const key = JSON.parse(made.stdout) as KeyJson & { rateLimitPerMinute: number | null; createdBy: string | null };
    assert.equal(key.rateLimitPerMinute, 120);
    assert.equal(key.createdBy, null);
    const table = await gateway('keys', 'list');
    assert.match(table.stdout, /limited .*120 .*operator/);
    const bad = await gateway('keys', 'create', 'x', '--scopes', 'sessions:read', '--rate-limit', '0');
    assert.equal(bad.code, 2, bad.stderr);
  });
});
