// The service environment file as systemd's EnvironmentFile= reads it, and when the CLI takes it in.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/load.js';
import { applyServiceEnvFile, parseEnvFile, serviceEnvFile } from '../../src/config/env-file.js';
import { skipUnless } from '../helpers/requirements.js';

test('parses KEY=VALUE lines, quotes and comments as systemd does', () => {
  const text = '# the service\n; also a comment\n\nGATEWAY_CONFIG=/etc/session-gateway/gateway.yaml\nGATEWAY_PORT = 3100\nQUOTED="a b"\nSINGLE=\'c d\'\nnot a line\n';
  assert.deepEqual(parseEnvFile(text), { GATEWAY_CONFIG: '/etc/session-gateway/gateway.yaml', GATEWAY_PORT: '3100', QUOTED: 'a b', SINGLE: 'c d' });
});

test('read only when no configuration is named; the caller\'s own environment wins; empty reads none; a named missing one is an error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-env-file-'));
  try {
    const file = join(dir, 'gateway.env');
    writeFileSync(file, 'GATEWAY_CONFIG=/srv/gateway.yaml\nGATEWAY_PORT=3100\n');
    assert.equal(serviceEnvFile('--config given', { GATEWAY_ENV_FILE: file }), undefined);
    assert.equal(serviceEnvFile(undefined, { GATEWAY_ENV_FILE: file, GATEWAY_CONFIG: '/x.yaml' }), undefined);
    assert.equal(serviceEnvFile(undefined, { GATEWAY_ENV_FILE: '' }), undefined);
    assert.throws(() => serviceEnvFile(undefined, { GATEWAY_ENV_FILE: join(dir, 'missing.env') }), (err) => err instanceof ConfigError && /environment file not found/.test(err.message));
    const env: NodeJS.ProcessEnv = { GATEWAY_ENV_FILE: file, GATEWAY_PORT: '4000' };
    assert.equal(applyServiceEnvFile(undefined, env), file);
    assert.equal(env.GATEWAY_CONFIG, '/srv/gateway.yaml');
    assert.equal(env.GATEWAY_PORT, '4000');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('only GATEWAY_* variables are taken from the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-env-file-'));
  try {
    const file = join(dir, 'gateway.env');
    writeFileSync(file, 'GATEWAY_PORT=3100\nNODE_OPTIONS=--require=/tmp/evil.js\nPATH=/tmp\n');
    const env: NodeJS.ProcessEnv = { GATEWAY_ENV_FILE: file };
    applyServiceEnvFile(undefined, env, 1000);
    assert.deepEqual(env, { GATEWAY_ENV_FILE: file, GATEWAY_PORT: '3100' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const root = process.getuid?.() === 0;
test('run as root, a file another user owns or may write is refused', { skip: skipUnless(root, 'needs root') }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-env-file-'));
  try {
    const file = join(dir, 'gateway.env');
    writeFileSync(file, 'GATEWAY_PORT=3100\n', { mode: 0o640 });
    assert.equal(applyServiceEnvFile(undefined, { GATEWAY_ENV_FILE: file }, 0), file);
    chmodSync(file, 0o660);
    assert.throws(() => applyServiceEnvFile(undefined, { GATEWAY_ENV_FILE: file }, 0), (err) => err instanceof ConfigError && /writable by group or others/.test(err.message));
    chmodSync(file, 0o640);
    chownSync(file, 65534, 65534);
    assert.throws(() => applyServiceEnvFile(undefined, { GATEWAY_ENV_FILE: file }, 0), (err) => err instanceof ConfigError && /owned by uid 65534/.test(err.message));
    const env: NodeJS.ProcessEnv = { GATEWAY_ENV_FILE: file };
    assert.equal(applyServiceEnvFile(undefined, env, 1000), file, 'another user reads it as before');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
