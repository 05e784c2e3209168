import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

test('client tokens cannot be configured to live longer than a day', () => {
  const env = { GATEWAY_MASTER_KEY: 'svc_master_bounds_0123456789abcdef0123' };
  assert.equal(loadConfig({ env: { ...env, CLIENT_TOKEN_MAX_TTL: '86400' } }).clientTokens.maxTtlSeconds, 86_400);
  assert.throws(() => loadConfig({ env: { ...env, CLIENT_TOKEN_MAX_TTL: '86401' } }), (err) => err instanceof ConfigError && /maxTtlSeconds/.test(err.message));
});

test('messages.retentionDays: "keep" by default (nothing pruned), or a whole number of days from 1', () => {
  const env = { GATEWAY_MASTER_KEY: 'svc_master_bounds_0123456789abcdef0123' };
  assert.equal(loadConfig({ env }).messages.retentionDays, 'keep');
  const dir = mkdtempSync(join(tmpdir(), 'bounds-'));
  const withYaml = (retentionDays: unknown) => {
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, `messages:\n  retentionDays: ${JSON.stringify(retentionDays)}\n`);
    return loadConfig({ env, configPath: file }).messages.retentionDays;
  };
  assert.equal(withYaml(30), 30);
  assert.equal(withYaml('keep'), 'keep');
  for (const bad of [0, -1, 1.5, 'forever', 40_000]) {
    assert.throws(() => withYaml(bad), (err) => err instanceof ConfigError && /retentionDays/.test(`${err.message} ${JSON.stringify(err)}`), `retentionDays ${bad}`);
  }
  rmSync(dir, { recursive: true, force: true });
});

test('sessions.health: the keep-alive must come more often than the silence that makes a session degraded (unless the watchdog is off)', () => {
  const env = { GATEWAY_MASTER_KEY: 'svc_master_bounds_0123456789abcdef0123' };
  assert.deepEqual(loadConfig({ env }).sessions.health, { silenceSeconds: 45, keepAliveSeconds: 30, probeTimeoutSeconds: 10, recoverSeconds: 60 });
  const dir = mkdtempSync(join(tmpdir(), 'bounds-'));
  const withHealth = (health: Record<string, number>) => {
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, `sessions:\n  health:\n${Object.entries(health).map(([k, v]) => `    ${k}: ${v}\n`).join('')}`);
    return loadConfig({ env, configPath: file }).sessions.health;
  };
  assert.equal(withHealth({ silenceSeconds: 3, keepAliveSeconds: 1 }).silenceSeconds, 3);
  assert.equal(withHealth({ silenceSeconds: 0, keepAliveSeconds: 30 }).silenceSeconds, 0, 'no watchdog: any keep-alive');
  assert.throws(() => withHealth({ silenceSeconds: 30, keepAliveSeconds: 30 }), (err) => err instanceof ConfigError && /keepAliveSeconds: must be less than/.test(err.message));
  assert.throws(() => withHealth({ probeTimeoutSeconds: 0 }), (err) => err instanceof ConfigError && /probeTimeoutSeconds/.test(err.message));
  rmSync(dir, { recursive: true, force: true });
});
