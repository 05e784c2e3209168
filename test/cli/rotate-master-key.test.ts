// `gateway rotate-master-key` end to end: on a stopped daemon it re-seals every secret under the new key (written into
// gateway.yaml, or printed once for the environment); sessions come back without pairing, webhooks sign with their key,
// the old key opens nothing; a wrong current key or a running daemon changes nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { generateEncryptionKey, isSealed, secretBoxFor } from '../../src/auth/secret-box.js';
import { contextOf } from '../../src/store/sealed-columns.js';
import { freePort, MASTER_KEY, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { runCli } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { copyDbFiles, hmacHex, readDb } from '../helpers/secrets.js';
import { skipUnless } from '../helpers/requirements.js';

const A = '+15550400001';
const B = '+15550400002';
const HMAC_SECRET = 'whsec-rotate-known-5e8a1c';
const S3_SECRET = 's3-rotate-known-0a9b8c7d';
const OLD_KEY = MASTER_KEY;

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
after(() => receiver.close());

const YAML = (masterKey: string) => `# the operator's own comment, kept by the rotation\nauth:\n  masterKey: ${masterKey}\nlogLevel: info\n`;

async function populate(daemon: TestDaemon, hookPath: string): Promise<void> {
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
  const hook = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}${hookPath}`, hmacKey: HMAC_SECRET, events: ['message.sent'] });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const s3 = await daemon.request('PUT', '/api/admin/settings', { s3: { bucket: 'media', accessKeyId: 'AKIAROTATE', secretAccessKey: S3_SECRET } });
  assert.equal(s3.status, 200, JSON.stringify(s3.body));
}

/** A message goes out, its webhook delivery is signed with HMAC_SECRET, and both sessions are CONNECTED (not paired again). */
async function stillWorks(daemon: TestDaemon, hookPath: string): Promise<void> {
  for (const name of ['a', 'b']) {
    await waitFor(async () => (await daemon.request('GET', `/api/sessions/${name}`)).body.data.status === 'CONNECTED', 5000, `${name} CONNECTED`);
  }
  const count = receiver.on(hookPath).length;
  const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'after rotation' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const deliveries = await receiver.waitForCount(count + 1, hookPath);
  const last = deliveries[deliveries.length - 1]!;
  assert.equal(last.headers['x-webhook-signature'], hmacHex(HMAC_SECRET, last.raw));
  assert.equal((await daemon.request('GET', '/api/admin/settings')).body.data.s3.secretAccessKeySet, true);
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Every sealed value of the database, with its column context. */
const sealedValues = (dataDir: string) =>
  readDb(dataDir, async (db) => [
    ...(await db.prepare<string>('SELECT value FROM auth_state').pluck().all()).map((v) => [v, contextOf('auth_state', 'value')] as const),
    ...(await db.prepare<string>('SELECT hmac_key FROM webhooks').pluck().all()).map((v) => [v, contextOf('webhooks', 'hmac_key')] as const),
    ...(await db.prepare<string>('SELECT value FROM settings').pluck().all()).map((v) => [v, contextOf('settings', 'value')] as const),
  ]);

describe('rotate-master-key, data key derived from the master key held in gateway.yaml', () => {
  let dataDir: string;
  let daemon: TestDaemon;
  let port: number;
  // GATEWAY_URL too: the CLI's default address (127.0.0.1:3000) may be another gateway on this machine
  const env = () => ({ GATEWAY_DATA_DIR: dataDir, GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', GATEWAY_URL: `http://127.0.0.1:${port}` });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rotate-yaml-'));
    port = await freePort();
    // GATEWAY_MASTER_KEY empty: the key comes from gateway.yaml
    daemon = await startDaemon({ dataDir, port, config: YAML(OLD_KEY), env: { GATEWAY_MASTER_KEY: '' } });
    await populate(daemon, '/yaml');
  });
  after(async () => {
    await daemon.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('refuses while the daemon answers at its address', async () => {
    const run = await runCli(['rotate-master-key'], { cwd: dataDir, env: env() });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /daemon answers at http:\/\/127\.0\.0\.1:\d+: stop it first/);
    assert.equal(parse(readFileSync(join(dataDir, 'gateway.yaml'), 'utf8')).auth.masterKey, OLD_KEY);
  });

  test('a wrong current key fails cleanly and leaves the database and gateway.yaml as they were', async () => {
    assert.equal(await daemon.stop(), 0);
    const before = copyDbFiles(dataDir).get('gateway.db')!;
    const run = await runCli(['--master-key', 'svc_master_not_the_right_one_0123456789ab', 'rotate-master-key'], { cwd: dataDir, env: env() });
    assert.equal(run.code, 4, run.stderr);
    assert.match(run.stderr, /does not open the secrets .* nothing was changed/);
    assert.ok(copyDbFiles(dataDir).get('gateway.db')!.equals(before), 'the database changed');
    assert.equal(parse(readFileSync(join(dataDir, 'gateway.yaml'), 'utf8')).auth.masterKey, OLD_KEY);
  });

  test('re-seals under the new key, writes it into gateway.yaml (0600), and the daemon comes back with it', async () => {
    const oldBox = secretBoxFor({ masterKey: OLD_KEY });
    const run = await runCli(['--json', 'rotate-master-key'], { cwd: dataDir, env: env() });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.equal(result.masterKey, undefined, 'a key written into gateway.yaml is not printed');
    assert.equal(result.dataKeyChanged, true);
    assert.ok(result.resealed['auth_state.value'] >= 2 && result.resealed['webhooks.hmac_key'] === 1, run.stdout);

    const text = readFileSync(join(dataDir, 'gateway.yaml'), 'utf8');
    const newKey = parse(text).auth.masterKey as string;
    assert.match(newKey, /^svc_master_[A-Za-z0-9_-]{43}$/);
    assert.ok(text.includes("the operator's own comment"));
    assert.equal(statSync(join(dataDir, 'gateway.yaml')).mode & 0o777, 0o600);

    // the old key opens none of the values; the new one opens them all
    const newBox = secretBoxFor({ masterKey: newKey });
    assert.equal(result.keyId, newBox.keyId);
    const values = await sealedValues(dataDir);
    assert.ok(values.length >= 4);
    for (const [value, context] of values) {
      assert.ok(isSealed(value));
      assert.throws(() => oldBox.open(value, context));
      newBox.open(value, context);
    }

    daemon = await startDaemon({ dataDir, port, env: { GATEWAY_MASTER_KEY: '' } });
    assert.equal((await daemon.request('GET', '/api/sessions', undefined, OLD_KEY)).status, 401, 'the old master key is refused');
    const asNew: TestDaemon = { ...daemon, request: (method, path, body, key = newKey, headers) => daemon.request(method, path, body, key, headers) };
    await stillWorks(asNew, '/yaml');
    assert.equal(await daemon.stop(), 0);

    // the old key no longer starts the daemon on this database
    await assert.rejects(startDaemon({ dataDir, port, env: { GATEWAY_MASTER_KEY: OLD_KEY } }), /not under this one/);
  });
});

describe('rotate-master-key with GATEWAY_ENCRYPTION_KEY, master key from the environment', () => {
  let dataDir: string;
  let daemon: TestDaemon;
  const encryptionKey = generateEncryptionKey();

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rotate-env-'));
    daemon = await startDaemon({ dataDir, env: { GATEWAY_ENCRYPTION_KEY: encryptionKey } });
    await populate(daemon, '/env');
    assert.equal(await daemon.stop(), 0);
  });
  after(async () => {
    await daemon.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the data key stays, the database is untouched, the new master key is printed once', async () => {
    const before = copyDbFiles(dataDir).get('gateway.db')!;
    const newKey = 'svc_master_after_rotation_env_0123456789abcdef';
    const idle = await freePort();
    const run = await runCli(['rotate-master-key', '--new-key', newKey], {
      cwd: dataDir,
      env: { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_ENCRYPTION_KEY: encryptionKey, GATEWAY_PORT: String(idle), GATEWAY_URL: `http://127.0.0.1:${idle}` },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /did not change: no value was re-sealed/);
    assert.match(run.stdout, /set GATEWAY_MASTER_KEY to it/);
    assert.equal(run.stdout.split(newKey).length - 1, 1, 'the new key is printed once');
    assert.ok(copyDbFiles(dataDir).get('gateway.db')!.equals(before), 'the database changed');

    // the values are sealed under the encryption key, not under anything derived from a master key
    const box = secretBoxFor({ encryptionKey });
    for (const [value, context] of await sealedValues(dataDir)) box.open(value, context);

    daemon = await startDaemon({ dataDir, env: { GATEWAY_MASTER_KEY: newKey, GATEWAY_ENCRYPTION_KEY: encryptionKey } });
    const asNew: TestDaemon = { ...daemon, request: (method, path, body, key = newKey, headers) => daemon.request(method, path, body, key, headers) };
    await stillWorks(asNew, '/env');
    assert.equal(await daemon.stop(), 0);

    // without the encryption key the daemon refuses to start: losing it loses the sessions
    await assert.rejects(startDaemon({ dataDir, env: { GATEWAY_MASTER_KEY: newKey } }), /master key changed without `gateway rotate-master-key`/);
  });
});

describe('rotate-master-key run as root on the service user\'s gateway.yaml', () => {
  const root = process.getuid?.() === 0;
  test('the new gateway.yaml keeps its owner', { skip: skipUnless(root, 'needs root') }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rotate-owner-'));
    try {
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, YAML(OLD_KEY), { mode: 0o600 });
      chownSync(file, 65534, 65534);
      const port = await freePort();
      const run = await runCli(['rotate-master-key'], { cwd: dir, env: { GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_MASTER_KEY: '' } });
      assert.equal(run.code, 0, run.stderr);
      assert.notEqual(parse(readFileSync(file, 'utf8')).auth.masterKey, OLD_KEY);
      const stat = statSync(file);
      assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o777], [65534, 65534, 0o600]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the README's layout (root:gateway, 0640) stays so: the service's user still reads the new key", { skip: skipUnless(root, 'needs root') }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rotate-layout-'));
    try {
      chownSync(dir, 0, 65534);
      chmodSync(dir, 0o750);
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, YAML(OLD_KEY), { mode: 0o640 });
      chownSync(file, 0, 65534);
      const port = await freePort();
      const run = await runCli(['rotate-master-key'], { cwd: dir, env: { GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_MASTER_KEY: '' } });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /\(mode 0640\)/);
      const stat = statSync(file);
      assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o777], [0, 65534, 0o640]);
      const read = spawnSync('cat', [file], { uid: 65534, gid: 65534, encoding: 'utf8' });
      assert.equal(read.status, 0, read.stderr);
      assert.notEqual(parse(read.stdout).auth.masterKey, OLD_KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a symlink the service\'s user planted at the staged name is not followed: the root file it names stays as it was', { skip: skipUnless(root, 'needs root') }, async () => {
    const outside = mkdtempSync(join(tmpdir(), 'rotate-outside-'));
    const secret = join(outside, 'root-secret');
    writeFileSync(secret, 'root only\n', { mode: 0o600 });
    // the staged name is `<file>.rotate-<pid>.tmp`: links for the next pids the kernel hands out, one of them the CLI's
    let vanished: string[] = [];
    for (let attempt = 0; attempt < 3 && vanished.length === 0; attempt += 1) {
      const dir = mkdtempSync(join(tmpdir(), 'rotate-planted-'));
      try {
        chownSync(dir, 65534, 65534);
        const file = join(dir, 'gateway.yaml');
        writeFileSync(file, YAML(OLD_KEY), { mode: 0o600 });
        chownSync(file, 65534, 65534);
        const next = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8')) + 1;
        const planted = Array.from({ length: 200 }, (_, i) => `${file}.rotate-${next + i}.tmp`);
        for (const link of planted) {
          symlinkSync(secret, link);
          lchownSync(link, 65534, 65534);
        }
        const port = await freePort();
        const run = await runCli(['rotate-master-key'], { cwd: dir, env: { GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_MASTER_KEY: '' } });
        vanished = planted.filter((link) => !existsSync(link) && !isLink(link));
        assert.equal(readFileSync(secret, 'utf8'), 'root only\n');
        const outsideStat = statSync(secret);
        assert.deepEqual([outsideStat.uid, outsideStat.gid, outsideStat.mode & 0o777], [0, 0, 0o600]);
        assert.equal(run.code, 0, run.stderr);
        const stat = lstatSync(file);
        assert.ok(stat.isFile(), 'gateway.yaml is a regular file');
        assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o777], [65534, 65534, 0o600]);
        assert.notEqual(parse(readFileSync(file, 'utf8')).auth.masterKey, OLD_KEY);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    rmSync(outside, { recursive: true, force: true });
    assert.equal(vanished.length, 1, "the CLI's pid was among the planted names (three tries)");
  });

  test("the database is re-sealed as the data directory's owner: a gateway.db link of that user's to root's database changes nothing", { skip: skipUnless(root, 'needs root') }, async () => {
    const daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_STORE: 'sqlite' } });
    const outside = mkdtempSync(join(tmpdir(), 'rotate-outside-'));
    try {
      assert.equal((await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/owner`, hmacKey: HMAC_SECRET, events: ['message.sent'] })).status, 201);
      await daemon.stop();
      // root's own copy of the database (a backup kept in /root, say), and the service's user pointing gateway.db at it
      const rootCopy = join(outside, 'gateway.db');
      renameSync(join(daemon.dataDir, 'gateway.db'), rootCopy);
      chmodSync(rootCopy, 0o600);
      const before = readFileSync(rootCopy);
      spawnSync('chown', ['-R', '65534:65534', daemon.dataDir]);
      symlinkSync(rootCopy, join(daemon.dataDir, 'gateway.db'));
      lchownSync(join(daemon.dataDir, 'gateway.db'), 65534, 65534);
      const port = await freePort();
      const run = await runCli(['rotate-master-key'], { cwd: daemon.dataDir, env: { GATEWAY_DATA_DIR: daemon.dataDir, GATEWAY_STORE: 'sqlite', GATEWAY_PORT: String(port), GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_MASTER_KEY: OLD_KEY } });
      // as the owner, the file is not even readable: the rotation fails, and root's file is as it was
      assert.equal(run.code, 1, run.stdout);
      assert.ok(readFileSync(rootCopy).equals(before), "root's database was rewritten");
      const stat = statSync(rootCopy);
      assert.deepEqual([stat.uid, stat.mode & 0o777, readdirSync(outside)], [0, 0o600, ['gateway.db']]);
    } finally {
      await daemon.cleanup();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test("as root on the service user's data directory, the re-sealed database and its files stay that user's", { skip: skipUnless(root, 'needs root') }, async () => {
    const daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_STORE: 'sqlite' } });
    try {
      assert.equal((await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/owner`, hmacKey: HMAC_SECRET, events: ['message.sent'] })).status, 201);
      await daemon.stop();
      spawnSync('chown', ['-R', '65534:65534', daemon.dataDir]);
      const port = await freePort();
      const run = await runCli(['--json', 'rotate-master-key'], { cwd: daemon.dataDir, env: { GATEWAY_DATA_DIR: daemon.dataDir, GATEWAY_STORE: 'sqlite', GATEWAY_PORT: String(port), GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_MASTER_KEY: OLD_KEY } });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).resealed['webhooks.hmac_key'], 1, run.stdout);
      const notOwners = readdirSync(daemon.dataDir).filter((name) => lstatSync(join(daemon.dataDir, name)).uid !== 65534);
      assert.deepEqual(notOwners, []);
    } finally {
      await daemon.cleanup();
    }
  });
});
