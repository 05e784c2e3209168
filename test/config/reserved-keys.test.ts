// A gateway.yaml with `__proto__` (or `constructor`/`prototype`) keys is refused, and nothing reaches Object.prototype.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { BIN, MASTER_KEY } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ENV = { GATEWAY_MASTER_KEY: MASTER_KEY };
let n = 0;
function yamlFile(text: string): string {
  const path = join(dir, `gateway-${n++}.yaml`);
  writeFileSync(path, text);
  return path;
}

const CASES: Array<[string, string, string]> = [
  ['top level', '__proto__:\n  polluted: true\nlogLevel: info\n', '__proto__'],
  ['nested', 'webhooks:\n  __proto__:\n    polluted: true\n', 'webhooks.__proto__'],
  ['flow mapping', '{"__proto__": {"polluted": true}}\n', '__proto__'],
  ['constructor.prototype', 'constructor:\n  prototype:\n    polluted: true\n', 'constructor'],
  ['prototype deeper', 'sessions:\n  prototype:\n    polluted: true\n', 'sessions.prototype'],
];

for (const [what, text, where] of CASES) {
  test(`${what}: refused with the key's path, Object.prototype untouched`, () => {
    assert.throws(
      () => loadConfig({ configPath: yamlFile(text), env: ENV }),
      (err: Error) => err instanceof ConfigError && err.problems.includes(`${where}: reserved key, not a setting`),
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
  });
}

test('a file without reserved keys still loads', () => {
  const config = loadConfig({ configPath: yamlFile('logLevel: warn\nwebhooks:\n  allowPrivateTargets: true\n'), env: ENV });
  assert.equal(config.logLevel, 'warn');
  assert.equal(config.webhooks.allowPrivateTargets, true);
});

test('gateway serve refuses to start with such a file and says why', () => {
  const path = yamlFile('__proto__:\n  polluted: true\n');
  const run = spawnSync(process.execPath, [BIN, 'serve', '--config', path], {
    env: { PATH: process.env.PATH ?? '', GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_PORT: '0', GATEWAY_DATA_DIR: dir },
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.notEqual(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout + run.stderr, /__proto__: reserved key, not a setting/);
});
