// gateway.example.yaml, copied as it ships (the README's first step), loads with only the master key from the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { MASTER_KEY } from '../helpers/daemon.js';

const EXAMPLE = fileURLToPath(new URL('../../../gateway.example.yaml', import.meta.url));

test('gateway.example.yaml loads as shipped, and its commented-out sections mean the defaults', () => {
  const config = loadConfig({ configPath: EXAMPLE, env: { GATEWAY_MASTER_KEY: MASTER_KEY } });
  assert.equal(config.auth.masterKey, MASTER_KEY);
  assert.equal(config.port, DEFAULT_CONFIG.port);
});

test('an empty section is the defaults; a section that is not a mapping is still refused', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'gateway-example-'));
  try {
    const empty = join(dir, 'empty.yaml');
    writeFileSync(empty, 'auth:\nsessions:\n  # nothing here yet\n');
    const config = loadConfig({ configPath: empty, env: { GATEWAY_MASTER_KEY: MASTER_KEY } });
    assert.deepEqual(config.sessions, DEFAULT_CONFIG.sessions);
    const scalar = join(dir, 'scalar.yaml');
    writeFileSync(scalar, 'sessions: 3\n');
    assert.throws(() => loadConfig({ configPath: scalar, env: { GATEWAY_MASTER_KEY: MASTER_KEY } }), /sessions/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
