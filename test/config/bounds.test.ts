import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/load.js';

test('client tokens cannot be configured to live longer than a day', () => {
  const env = { GATEWAY_MASTER_KEY: 'svc_master_bounds_0123456789abcdef0123' };
  assert.equal(loadConfig({ env: { ...env, CLIENT_TOKEN_MAX_TTL: '86400' } }).clientTokens.maxTtlSeconds, 86_400);
  assert.throws(() => loadConfig({ env: { ...env, CLIENT_TOKEN_MAX_TTL: '86401' } }), (err) => err instanceof ConfigError && /maxTtlSeconds/.test(err.message));
});
