// `gateway init`: writes a loadable 0600 gateway.yaml with a new master key and a separate encryption key, refuses to
// overwrite without --force.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli.js';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { parseEncryptionKey, secretBoxFor } from '../../src/auth/secret-box.js';
import { freePort, startDaemon } from '../helpers/daemon.js';
import { readDb, storedValue } from '../helpers/secrets.js';

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'gateway-cli-init-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** A fresh working directory per test, so the tests can run at the same time. */
function workdir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
}

const gateway = (cwd: string, ...args: string[]) => runCli(args, { cwd });

const mode = (path: string) => statSync(path).mode & 0o777;

describe('gateway init', { concurrency: true }, () => {
  test('--yes writes ./gateway.yaml, mode 0600, that loadConfig accepts, with a new master key', async () => {
    const dir = workdir('defaults');
    const res = await gateway(dir, 'init', '--yes');
    assert.equal(res.code, 0, res.stderr);
    const path = join(dir, 'gateway.yaml');
    assert.ok(existsSync(path));
    assert.equal(mode(path), 0o600);
    assert.ok(res.stdout.includes(path), res.stdout);
    assert.match(res.stdout, /next: gateway serve/);
    assert.ok(!res.stdout.includes('svc_master_'), 'the key is not echoed in human output');

    const text = readFileSync(path, 'utf8');
    assert.match(text, /^# gateway\.yaml: written by `gateway init`/);
    const config = loadConfig({ configPath: path, env: {} });
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 3000);
    // ./data in the file, beside it once loaded
    assert.match(text, /^dataDir: \.\/data$/m);
    assert.equal(config.dataDir, join(dir, 'data'));
    assert.equal(config.engine.default, 'baileys');
    assert.match(config.auth.masterKey ?? '', /^svc_master_[A-Za-z0-9_-]{43}$/);
    assert.ok(config.auth.masterKey!.length >= 32);
  });

  test('refuses to overwrite without --force; --force writes a new key and resets the mode to 0600', async () => {
    const dir = workdir('overwrite');
    const path = join(dir, 'gateway.yaml');
    assert.equal((await gateway(dir, 'init', '--yes')).code, 0);
    const first = readFileSync(path, 'utf8');

    const refused = await gateway(dir, 'init', '--yes');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /^error: .*already exists.*--force/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    assert.equal(readFileSync(path, 'utf8'), first);

    const oldKey = loadConfig({ configPath: path, env: {} }).auth.masterKey;
    chmodSync(path, 0o644);
    const forced = await gateway(dir, 'init', '--yes', '--force');
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(mode(path), 0o600);
    assert.notEqual(loadConfig({ configPath: path, env: {} }).auth.masterKey, oldKey);
  });

  test('--json --path (stdin not a terminal: no prompts) prints {path, masterKey} matching the file', async () => {
    const dir = workdir('json');
    const res = await gateway(dir, '--json', 'init', '--path', 'conf/other.yaml');
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as { path: string; masterKey: string };
    assert.equal(out.path, join(dir, 'conf', 'other.yaml'));
    assert.equal(mode(out.path), 0o600);
    assert.equal(loadConfig({ configPath: out.path, env: {} }).auth.masterKey, out.masterKey);
  });

  test('the global --config names the file to write', async () => {
    const dir = workdir('config-flag');
    const res = await gateway(dir, '--config', 'via-config.yaml', 'init', '--yes');
    assert.equal(res.code, 0, res.stderr);
    assert.ok(existsSync(join(dir, 'via-config.yaml')));
    assert.match(res.stdout, /next: gateway --config via-config\.yaml serve/);
  });

  test('writes a separate encryption key: the daemon seals with it, and rotate-master-key re-seals nothing', async () => {
    const dir = workdir('encryption-key');
    const res = await gateway(dir, 'init', '--yes');
    assert.equal(res.code, 0, res.stderr);
    assert.ok(!res.stdout.includes(loadConfig({ configPath: join(dir, 'gateway.yaml'), env: {} }).auth.encryptionKey!), 'the key is not echoed');
    const { masterKey, encryptionKey } = loadConfig({ configPath: join(dir, 'gateway.yaml'), env: {} }).auth;
    assert.equal(parseEncryptionKey(encryptionKey!).length, 32);
    assert.notEqual(secretBoxFor({ encryptionKey }).keyId, secretBoxFor({ masterKey }).keyId, 'the data key is not derived from the master key');

    const port = await freePort();
    // the daemon reads gateway.yaml from its working directory, the init'd one
    let daemon = await startDaemon({ dataDir: dir, port, env: { GATEWAY_MASTER_KEY: '', GATEWAY_LOG_LEVEL: 'warn' } });
    const hmacKey = 'init-encryption-key-hmac-0123456789';
    const created = await daemon.request('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['session.status'], hmacKey }, masterKey);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(await daemon.stop(), 0);
    const where = `id = ${created.body.data.id}`;
    assert.equal(await storedValue(dir, 'webhooks', 'hmac_key', where, { encryptionKey }), hmacKey);
    await assert.rejects(storedValue(dir, 'webhooks', 'hmac_key', where, { masterKey }), 'the master key alone does not open it');
    const sealedBefore = await readDb(dir, (db) => db.prepare<string>(`SELECT hmac_key FROM webhooks WHERE ${where}`).pluck().get());
    assert.ok(sealedBefore);

    const idle = await freePort();
    const rotated = await runCli(['rotate-master-key'], { cwd: dir, env: { GATEWAY_DATA_DIR: dir, GATEWAY_PORT: String(idle), GATEWAY_URL: `http://127.0.0.1:${idle}` } });
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /no value was re-sealed/);
    const after = loadConfig({ configPath: join(dir, 'gateway.yaml'), env: {} }).auth;
    assert.notEqual(after.masterKey, masterKey);
    assert.equal(after.encryptionKey, encryptionKey);
    assert.equal(await readDb(dir, (db) => db.prepare<string>(`SELECT hmac_key FROM webhooks WHERE ${where}`).pluck().get()), sealedBefore);

    daemon = await startDaemon({ dataDir: dir, port, env: { GATEWAY_MASTER_KEY: '', GATEWAY_LOG_LEVEL: 'warn' } });
    try {
      assert.equal((await daemon.request('GET', `/api/webhooks/${created.body.data.id}`, undefined, after.masterKey)).status, 200);
      assert.equal((await daemon.request('GET', '/api/webhooks', undefined, masterKey)).status, 401);
    } finally {
      await daemon.stop();
    }
  });
});
