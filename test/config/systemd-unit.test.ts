// config/gateway.service as the README installs it: `systemd-analyze verify` finds nothing to say, `systemd-analyze
// security` rates it OK (exposure ≤ 2.5), its key options are there, and a real daemon, traced with strace while it
// starts, serves, backs up and stops, makes no system call the unit's SystemCallFilter refuses and opens no socket of a
// family RestrictAddressFamilies refuses. (systemd cannot run here as PID 1: the unit itself is not started.)
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, freePort, MASTER_KEY, ROOT, waitFor } from '../helpers/daemon.js';
import { skipUnless } from '../helpers/requirements.js';

const UNIT = readFileSync(join(ROOT, 'config', 'gateway.service'), 'utf8');
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const ANALYZE = has('systemd-analyze');
// strace present and allowed to trace (a container may refuse ptrace)
const STRACE = has('strace') && spawnSync('strace', ['-f', '-o', '/dev/null', 'true']).status === 0;

/** Every value of every `Key=` line in the [Service] section (a key may repeat). */
function serviceOptions(text: string): Map<string, string[]> {
  const options = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line.startsWith('[')) section = line;
    else if (section === '[Service]' && /^[A-Za-z]+=/.test(line)) {
      const at = line.indexOf('=');
      options.set(line.slice(0, at), [...(options.get(line.slice(0, at)) ?? []), line.slice(at + 1)]);
    }
  }
  return options;
}

/** The system calls of a systemd group, its nested groups expanded (systemd-analyze syscall-filter). */
function syscallGroup(name: string): Set<string> {
  const out = execFileSync('systemd-analyze', ['syscall-filter', name], { encoding: 'utf8' });
  const calls = new Set<string>();
  for (const line of out.split('\n').slice(1).map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('@')) for (const call of syscallGroup(line)) calls.add(call);
    else calls.add(line);
  }
  return calls;
}

describe('the systemd unit', () => {
  const work = mkdtempSync(join(tmpdir(), 'gateway-unit-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  // as the README installs it, with the paths of this checkout and this node (verify wants ExecStart's binary to exist)
  const installed = join(work, 'session-gateway.service');
  writeFileSync(installed, UNIT.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/session-gateway', ROOT));
  const options = serviceOptions(UNIT);

  test('has the options the daemon and the README rely on', () => {
    assert.deepEqual(options.get('User'), ['gateway']);
    assert.deepEqual(options.get('ExecStart'), ['/usr/bin/node /opt/session-gateway/bin/gateway serve']);
    // the one environment file the unit and the CLI share (src/config/env-file.ts)
    assert.deepEqual(options.get('EnvironmentFile'), ['/etc/session-gateway/gateway.env']);
    assert.deepEqual(options.get('StateDirectory'), ['session-gateway']);
    assert.deepEqual(options.get('UMask'), ['0077']);
    for (const key of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'RestrictNamespaces', 'LockPersonality', 'RestrictSUIDSGID']) {
      assert.deepEqual(options.get(key), ['true'], key);
    }
    assert.deepEqual(options.get('ProtectSystem'), ['strict']);
    assert.deepEqual(options.get('CapabilityBoundingSet'), ['']);
    assert.deepEqual(options.get('RestrictAddressFamilies')?.[0]?.split(/\s+/).sort(), ['AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_UNIX']);
    assert.ok(options.get('SystemCallFilter')?.includes('@system-service'));
    // V8's JIT needs writable executable memory, and better-sqlite3's addon in /opt is mapped executable
    assert.equal(options.get('MemoryDenyWriteExecute'), undefined);
    assert.equal(options.get('NoExecPaths'), undefined);
  });

  test("the README's install steps match the unit: its path, the environment file, the CLI on PATH", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Running under systemd'), readme.indexOf('\n## ', readme.indexOf('## Running under systemd') + 3));
    assert.match(section, /sudo cp config\/gateway\.service \/etc\/systemd\/system\/session-gateway\.service/);
    assert.match(section, /sudo ln -s \/opt\/session-gateway\/bin\/gateway \/usr\/local\/bin\/gateway/);
    assert.ok(section.includes(`sudo tee ${options.get('EnvironmentFile')![0]}`), 'the README writes the file the unit reads');
    assert.match(section, /GATEWAY_CONFIG=\/etc\/session-gateway\/gateway\.yaml/);
    assert.match(section, /sudo -u gateway gateway sessions list/);
  });

  test('systemd-analyze verify finds nothing', { skip: skipUnless(ANALYZE, 'systemd-analyze is not installed') }, () => {
    const run = spawnSync('systemd-analyze', ['verify', installed], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stderr + run.stdout, /session-gateway\.service/, run.stderr);
  });

  test('systemd-analyze security rates it OK (exposure ≤ 2.5)', { skip: skipUnless(ANALYZE, 'systemd-analyze is not installed') }, () => {
    const run = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', installed], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const overall = /Overall exposure level for session-gateway\.service: (\d+\.\d+) (\w+)/.exec(run.stdout);
    assert.ok(overall, run.stdout);
    assert.ok(Number(overall[1]) <= 2.5, `exposure ${overall[1]} ${overall[2]}:\n${run.stdout}`);
  });

  test(
    ANALYZE && STRACE ? "the daemon, traced, makes no system call the filter refuses and opens only the allowed socket families" : 'the daemon under the filter (SKIPPED: strace or systemd-analyze is not installed)',
    { skip: skipUnless(ANALYZE && STRACE, 'systemd-analyze or a working strace is missing') },
    async () => {
      const allowed = new Set<string>();
      for (const entry of options.get('SystemCallFilter')!) {
        const deny = entry.startsWith('~');
        for (const name of entry.replace(/^~/, '').split(/\s+/)) {
          const calls = name.startsWith('@') ? syscallGroup(name) : new Set([name]);
          for (const call of calls) deny ? allowed.delete(call) : allowed.add(call);
        }
      }
      // the unit runs the daemon as its own user, never as root (SQLite, for one, fchowns its journals only as root)
      const asRoot = process.getuid?.() === 0;
      const dataDir = join(work, 'data');
      mkdirSync(dataDir, { mode: 0o700 });
      if (asRoot) {
        chmodSync(work, 0o755);
        chownSync(dataDir, 65534, 65534);
      }
      const trace = join(dataDir, 'strace.txt');
      const port = await freePort();
      const child = spawn('strace', ['-f', '-qq', '-o', trace, process.execPath, BIN, 'serve'], {
        cwd: dataDir,
        env: { PATH: process.env.PATH ?? '', GATEWAY_ENV_FILE: '', GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_DATA_DIR: dataDir, GATEWAY_PORT: String(port), GATEWAY_DEFAULT_ENGINE: 'sandbox', GATEWAY_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'pipe'],
        ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      const url = `http://127.0.0.1:${port}`;
      const call = (method: string, path: string, body?: unknown) =>
        fetch(url + path, { method, headers: { Authorization: `Bearer ${MASTER_KEY}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      try {
        await waitFor(() => fetch(`${url}/api/health`).then((r) => r.ok, () => false), 30_000, 'the traced daemon answers').catch((err: Error) => {
          throw new Error(`${err.message}: ${stderr}`);
        });
        assert.equal((await call('POST', '/api/sessions', { name: 'traced', start: true })).status, 201);
        assert.equal((await call('POST', '/api/admin/backups', {})).status, 201);
        assert.equal((await call('GET', '/api/openapi.json')).status, 200);
      } finally {
        // to node itself: strace, signalled, would detach and leave it running (never pid 0: that is this process group)
        let traced: number[] = [];
        try {
          traced = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number).filter((pid) => pid > 0);
        } catch {
          // strace has exited already
        }
        for (const pid of traced) process.kill(pid, 'SIGTERM');
        if (traced.length === 0) child.kill('SIGKILL');
      }
      assert.equal(await exited, 0);
      const lines = readFileSync(trace, 'utf8').split('\n');
      const used = new Set(lines.map((line) => /^\d+\s+([a-z0-9_]+)\(/.exec(line)?.[1]).filter((name): name is string => !!name));
      assert.ok(used.has('epoll_wait') || used.has('epoll_pwait'), 'the trace holds the event loop');
      // V8 asks for memory protection keys and, refused (EPERM under the filter, EINVAL without PKU), goes on without them;
      // traced here without the filter, on a CPU with PKU it gets one and then uses it (pkey_mprotect), which it never
      // reaches under the unit
      const memoryKeys = syscallGroup('@pkey');
      const refused = [...used].filter((name) => !allowed.has(name) && !memoryKeys.has(name));
      assert.deepEqual(refused, [], `system calls the unit's SystemCallFilter refuses: ${refused.join(', ')}`);
      const families = new Set(lines.map((line) => /\bsocket\((AF_[A-Z0-9]+)/.exec(line)?.[1]).filter((family): family is string => !!family));
      const allowedFamilies = new Set(options.get('RestrictAddressFamilies')![0]!.split(/\s+/));
      assert.ok(families.has('AF_INET') || families.has('AF_INET6'), `the trace holds the listening socket: ${[...families].join(', ')}`);
      assert.deepEqual([...families].filter((family) => !allowedFamilies.has(family)), []);
    },
  );
});
