// Where the CLI finds its configuration and data, run from anywhere as an operator on a VPS would: a relative dataDir is
// the config file's neighbour for serve, backup, restore and doctor; a named config that is missing or broken stops
// every command with exit 4 and the file's name; the service's environment file (GATEWAY_ENV_FILE) leads the CLI to the
// service's config; a 401 without a key says what the CLI read; and `gateway` works through a symlink on PATH.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, freePort, MASTER_KEY, waitFor } from '../helpers/daemon.js';
import { runCli, type RunResult } from '../helpers/cli.js';

describe('configuration and data, from any directory', () => {
  const work = mkdtempSync(join(tmpdir(), 'gateway-config-location-'));
  const confDir = join(work, 'etc');
  const config = join(confDir, 'gateway.yaml');
  const elsewhere = join(work, 'elsewhere');
  let port: number;
  let daemon: ChildProcess | undefined;

  const startServe = async () => {
    // run from another directory, the data directory named relative to the config
    const child = spawn(process.execPath, [BIN, '--config', config, 'serve'], { cwd: elsewhere, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await waitFor(() => fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false), 20_000, 'serve answers').catch((err: Error) => {
      child.kill('SIGKILL');
      throw new Error(`${err.message}: ${output}`);
    });
    return child;
  };
  const stopServe = async () => {
    if (!daemon || daemon.exitCode !== null) return;
    const exited = new Promise((done) => daemon!.once('exit', done));
    daemon.kill('SIGTERM');
    await exited;
  };

  before(async () => {
    mkdirSync(confDir, { mode: 0o700 });
    mkdirSync(elsewhere);
    port = await freePort();
    writeFileSync(config, `host: 127.0.0.1\nport: ${port}\ndataDir: ./data\nlogLevel: warn\nauth:\n  masterKey: ${MASTER_KEY}\nengine:\n  default: sandbox\n`, { mode: 0o600 });
    daemon = await startServe();
  });
  after(async () => {
    await stopServe();
    rmSync(work, { recursive: true, force: true });
  });

  test('serve, backup, doctor and restore all use <config dir>/data, not <cwd>/data', async () => {
    const dataDir = join(confDir, 'data');
    assert.ok(existsSync(join(dataDir, 'gateway.db')), 'serve made its database beside the config');
    assert.ok(!existsSync(join(elsewhere, 'data')), 'nothing in the current directory');

    const backup = await runCli(['--config', config, 'backup', 'copy.db'], { cwd: elsewhere });
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, new RegExp(`backup written: ${join(elsewhere, 'copy.db')}`));

    const doctor = await runCli(['--config', config, '--json', 'doctor'], { cwd: '/' });
    const database = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; detail: string }> }).checks.find((c) => c.id === 'database')!;
    assert.match(database.detail, new RegExp(`^${join(dataDir, 'gateway.db')}: .*integrity ok`));

    await stopServe();
    const restore = await runCli(['--config', config, 'restore', join(elsewhere, 'copy.db')], { cwd: '/' });
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, new RegExp(`into ${join(dataDir, 'gateway.db')}\\n`));
    assert.ok(!existsSync('/data/gateway.db'));
    daemon = await startServe();
  });

  test('GATEWAY_DATA_DIR, typed in a shell, stays relative to the current directory', async () => {
    const doctor = await runCli(['--config', config, '--json', 'doctor'], { cwd: elsewhere, env: { GATEWAY_DATA_DIR: 'here' } });
    const database = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; detail: string }> }).checks.find((c) => c.id === 'database')!;
    assert.match(database.detail, new RegExp(`^${join(elsewhere, 'here', 'gateway.db')} does not exist`));
  });

  describe('a named configuration that does not load: exit 4 with its name and the error, for every command', () => {
    const missing = () => join(work, 'missing.yaml');
    const broken = () => join(work, 'broken.yaml');
    before(() => writeFileSync(broken(), 'port: [3000\n'));

    const expectConfigError = (run: RunResult, file: string, error: RegExp) => {
      assert.equal(run.code, 4, `${run.stdout}${run.stderr}`);
      assert.ok(run.stderr.includes(file), run.stderr);
      assert.match(run.stderr, error);
    };

    for (const command of [['sessions', 'list'], ['status'], ['backup'], ['restore', 'nothing.db'], ['doctor'], ['serve']]) {
      test(`gateway ${command.join(' ')}`, async () => {
        // the daemon answers at the default-looking address through GATEWAY_URL: the command must not go there anyway
        const env = { GATEWAY_URL: `http://127.0.0.1:${port}` };
        expectConfigError(await runCli(['--config', missing(), ...command], { cwd: elsewhere, env }), missing(), /config file not found/);
        expectConfigError(await runCli(command, { cwd: elsewhere, env: { ...env, GATEWAY_CONFIG: broken() } }), broken(), /is not valid YAML: .*flow sequence/i);
      });
    }

    test('an invalid ./gateway.yaml too', async () => {
      const dir = join(work, 'local-broken');
      mkdirSync(dir);
      writeFileSync(join(dir, 'gateway.yaml'), 'port: nope\n');
      const run = await runCli(['sessions', 'list'], { cwd: dir });
      expectConfigError(run, join(dir, 'gateway.yaml'), /port: must be integer/);
    });
  });

  describe("the service's environment file", () => {
    const envFile = () => join(confDir, 'gateway.env');
    before(() => writeFileSync(envFile(), `# as the unit reads it\nGATEWAY_CONFIG="${config}"\n`, { mode: 0o600 }));

    test('with no configuration named, the CLI reads GATEWAY_ENV_FILE and reaches the service with its key', async () => {
      const run = await runCli(['--json', 'sessions', 'list'], { cwd: elsewhere, env: { GATEWAY_ENV_FILE: envFile() } });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), []);
    });

    test('a named environment file that is missing is a configuration error', async () => {
      const run = await runCli(['sessions', 'list'], { cwd: elsewhere, env: { GATEWAY_ENV_FILE: join(work, 'nope.env') } });
      assert.equal(run.code, 4);
      assert.match(run.stderr, /environment file not found: .*nope\.env/);
    });

    test('--config wins over the environment file', async () => {
      const other = join(work, 'other.yaml');
      writeFileSync(other, `port: ${await freePort()}\n`);
      const run = await runCli(['--config', other, 'sessions', 'list'], { cwd: elsewhere, env: { GATEWAY_ENV_FILE: envFile() } });
      assert.equal(run.code, 3, run.stderr);
    });
  });

  test('UNAUTHORIZED without a key says what the CLI read and how to point it at the service', async () => {
    const none = await runCli(['sessions', 'list'], { cwd: elsewhere, env: { GATEWAY_URL: `http://127.0.0.1:${port}`, GATEWAY_ENV_FILE: '' } });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^error: UNAUTHORIZED: /);
    assert.match(none.stderr, /the CLI sent no key: it found no configuration/);
    assert.match(none.stderr, /--config \/etc\/session-gateway\/gateway\.yaml/);

    const keyless = join(work, 'keyless.yaml');
    writeFileSync(keyless, `port: ${port}\n`);
    const run = await runCli(['--config', keyless, 'sessions', 'list'], { cwd: elsewhere });
    assert.equal(run.code, 1);
    assert.match(run.stderr, new RegExp(`it read ${keyless}, which sets no auth\\.masterKey`));
  });

  test('`gateway` runs through a symlink on PATH, as the README installs it', async () => {
    const binDir = join(work, 'usr-local-bin');
    mkdirSync(binDir);
    symlinkSync(BIN, join(binDir, 'gateway'));
    const run = await new Promise<RunResult>((done) =>
      execFile('gateway', ['--config', config, '--json', 'sessions', 'list'], { cwd: elsewhere, env: { PATH: `${binDir}:${process.env.PATH ?? ''}` } }, (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      ),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), []);
  });
});
