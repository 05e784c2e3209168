// `sudo gateway restore` on a VPS, where the daemon runs as its own user: the restored files are that user's (the daemon
// as that user starts on them, where it used to exit "unable to open database file"); another user who is not the owner
// is refused, naming the owner; and doctor, run by a user who cannot open the database, says permission denied and how
// to fix it, not that the database is damaged. Root runs the first and last (uid 65534 plays the daemon's user).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, freePort, MASTER_KEY, startDaemon, waitFor } from '../helpers/daemon.js';
import type { RunResult } from '../helpers/cli.js';
import { skipUnless } from '../helpers/requirements.js';

const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

function runAs(uid: number | undefined, args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  return new Promise((done) => {
    const ids = uid === undefined ? {} : { uid, gid: uid };
    execFile(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000, ...ids }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Every path under dir (itself included) with its owner's uid. */
function owners(dir: string): Array<[string, number]> {
  const found: Array<[string, number]> = [[dir, statSync(dir).uid]];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...owners(path));
    else found.push([path, statSync(path).uid]);
  }
  return found;
}

describe('restore and doctor as a user other than the daemon', () => {
  const work = mkdtempSync(join(tmpdir(), 'gateway-ownership-'));
  const backup = join(work, 'backup.db');
  let idle: number;
  let env: Record<string, string>;

  before(async () => {
    // the other user must reach the files inside
    chmodSync(work, 0o755);
    // SQLite even in the suite's PostgreSQL pass: restore works on gateway.db
    const daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_STORE: 'sqlite' } });
    try {
      assert.equal((await daemon.request('POST', '/api/sessions', { name: 'kept' })).status, 201);
      const taken = await daemon.request('POST', '/api/admin/backups', {});
      assert.equal(taken.status, 201);
      copyFileSync(taken.body.data.path, backup);
      chmodSync(backup, 0o644);
    } finally {
      await daemon.cleanup();
    }
    idle = await freePort();
    env = { GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_URL: `http://127.0.0.1:${idle}`, GATEWAY_PORT: String(idle) };
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  test('as root, restore gives every file it writes to the data directory\'s owner, and that user\'s daemon starts on them', { skip: skipUnless(ROOT_USER, 'needs root') }, async () => {
    const dataDir = join(work, 'owned');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, NOBODY, NOBODY);
    const media = join(work, 'media');
    mkdirSync(media);
    writeFileSync(join(media, 'blob-1'), 'a blob');

    const first = await runAs(undefined, ['restore', backup, '--media', media], work, { ...env, GATEWAY_DATA_DIR: dataDir });
    assert.equal(first.code, 0, first.stderr);
    // again, so there is a replaced database and media directory too
    const second = await runAs(undefined, ['restore', backup, '--media', media], work, { ...env, GATEWAY_DATA_DIR: dataDir });
    assert.equal(second.code, 0, second.stderr);
    const files = owners(dataDir);
    for (const name of ['gateway.db', 'restored.json', join('media', 'blob-1')]) assert.ok(existsSync(join(dataDir, name)), name);
    assert.ok(files.some(([path]) => /gateway\.db\.replaced-/.test(path)));
    assert.deepEqual(files.filter(([, uid]) => uid !== NOBODY), [], 'files not owned by the data directory\'s owner');

    // the daemon as that user opens the database and takes in the restore note
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_DATA_DIR: dataDir, GATEWAY_PORT: String(port), GATEWAY_DEFAULT_ENGINE: 'sandbox', GATEWAY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      uid: NOBODY,
      gid: NOBODY,
    });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise((done) => child.once('exit', done));
    try {
      await waitFor(() => fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false), 20_000, 'the daemon as its user answers').catch((err: Error) => {
        throw new Error(`${err.message}: ${output}`);
      });
      const sessions = await fetch(`http://127.0.0.1:${port}/api/sessions`, { headers: { Authorization: `Bearer ${MASTER_KEY}` } }).then((r) => r.json() as Promise<{ data: Array<{ name: string }> }>);
      assert.deepEqual(sessions.data.map((s) => s.name), ['kept']);
      await waitFor(() => !existsSync(join(dataDir, 'restored.json')), 5000, 'the restore note recorded and removed');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  test('as root, restore follows no symlink the data directory\'s owner planted: a root file outside stays as it was', { skip: skipUnless(ROOT_USER, 'needs root') }, async () => {
    // the backup and its media readable by root only, as one kept in /root would be
    const vault = join(work, 'vault');
    mkdirSync(vault, { mode: 0o700 });
    const privateBackup = join(vault, 'backup.db');
    copyFileSync(backup, privateBackup);
    chmodSync(privateBackup, 0o600);
    const privateMedia = join(vault, 'media');
    mkdirSync(privateMedia, { mode: 0o700 });
    writeFileSync(join(privateMedia, 'blob-1'), 'a blob', { mode: 0o600 });
    // what the service user must not get: a file and a directory of root's outside the data directory
    const secret = join(work, 'root-secret');
    writeFileSync(secret, 'root only\n', { mode: 0o600 });
    const rootDir = join(work, 'root-dir');
    mkdirSync(rootDir, { mode: 0o700 });

    const dataDir = join(work, 'planted');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, NOBODY, NOBODY);
    for (const [name, target] of [['restored.json', secret], ['media', rootDir]] as const) {
      symlinkSync(target, join(dataDir, name));
      lchownSync(join(dataDir, name), NOBODY, NOBODY);
    }

    const run = await runAs(undefined, ['restore', privateBackup, '--media', privateMedia], work, { ...env, GATEWAY_DATA_DIR: dataDir });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(secret, 'utf8'), 'root only\n');
    const stat = statSync(secret);
    assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o777], [0, 0, 0o600]);
    const dir = statSync(rootDir);
    assert.deepEqual([dir.uid, dir.gid, dir.mode & 0o777, readdirSync(rootDir)], [0, 0, 0o700, []]);
    // the restore happened all the same, into regular files of the owner's
    for (const name of ['gateway.db', 'restored.json', join('media', 'blob-1')]) {
      const file = lstatSync(join(dataDir, name));
      assert.ok(file.isFile(), name);
      assert.deepEqual([file.uid, file.gid, file.mode & 0o777], [NOBODY, NOBODY, 0o600], name);
    }
    assert.equal(readFileSync(join(dataDir, 'media', 'blob-1'), 'utf8'), 'a blob');
    assert.match(readFileSync(join(dataDir, 'restored.json'), 'utf8'), /"from":"backup\.db"/);
  });

  test('a user who is not the data directory\'s owner is refused, the owner named, nothing changed', async () => {
    // as root: uid 65534 restoring into a directory of root's; otherwise this user into / (root's)
    const dataDir = ROOT_USER ? join(work, 'roots') : '/';
    if (ROOT_USER) mkdirSync(dataDir, { mode: 0o755 });
    const before = readdirSync(dataDir);
    const run = await runAs(ROOT_USER ? NOBODY : undefined, ['restore', backup], work, { ...env, GATEWAY_DATA_DIR: dataDir });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, new RegExp(`${dataDir} belongs to root \\(uid 0\\), and this is uid \\d+: run the restore as root .*nothing was changed`));
    assert.deepEqual(readdirSync(dataDir), before);
  });

  test('doctor and serve, as a user who cannot open the database, say permission denied and the fix, not damage', { skip: skipUnless(ROOT_USER, 'needs root') }, async () => {
    // what a restore run with sudo used to leave: the daemon user's directory, root's database, 0600
    const dataDir = join(work, 'left-by-root');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, NOBODY, NOBODY);
    copyFileSync(backup, join(dataDir, 'gateway.db'));
    chmodSync(join(dataDir, 'gateway.db'), 0o600);
    const run = await runAs(NOBODY, ['--json', 'doctor'], work, { ...env, GATEWAY_DATA_DIR: dataDir });
    assert.equal(run.code, 1, run.stderr);
    const database = (JSON.parse(run.stdout) as { checks: Array<{ id: string; verdict: string; detail: string; fix?: string }> }).checks.find((c) => c.id === 'database')!;
    assert.equal(database.verdict, 'fail');
    assert.match(database.detail, new RegExp(`cannot open ${join(dataDir, 'gateway.db')}: permission denied \\(EACCES\\) \\(owned by root, mode 600\\); doctor runs as nobody`));
    assert.doesNotMatch(database.detail + database.fix, /quick_check|gateway restore/);
    assert.match(database.fix!, new RegExp(`sudo -u nobody gateway doctor.*sudo chown -R nobody: ${dataDir}`));

    // and the daemon as that user says the same, where SQLite says only "unable to open database file"
    const serve = await runAs(NOBODY, ['serve'], work, { ...env, GATEWAY_DATA_DIR: dataDir, GATEWAY_DEFAULT_ENGINE: 'sandbox', GATEWAY_LOG_LEVEL: 'warn' });
    assert.equal(serve.code, 1, serve.stdout + serve.stderr);
    assert.match(serve.stderr, new RegExp(`^error: cannot open ${join(dataDir, 'gateway.db')}: permission denied \\(EACCES\\) \\(owned by root, mode 600\\); serve runs as nobody`));
    assert.match(serve.stderr, new RegExp(`fix: .*sudo chown -R nobody: ${dataDir}`));
  });
});
