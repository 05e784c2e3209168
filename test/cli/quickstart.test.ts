// The README quick start, run the way an operator runs it: `init --yes` in an empty directory, `serve` and the CLI
// finding the daemon and the master key through that gateway.yaml only (no GATEWAY_* variables), `sessions pair`
// waiting while the sandbox's simulated phone "scans" the QR, then `sessions list` showing the session CONNECTED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { BIN, freePort, waitFor } from '../helpers/daemon.js';

/** Only PATH: nothing GATEWAY_* from the test runner's environment reaches the processes. */
const cleanEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? '' });

interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `node bin/gateway …` in `cwd`, stdin not a terminal, output collected as it arrives. */
function launch(cwd: string, args: string[]): Running {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.end();
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, output: () => output, exited };
}

async function end(running: Running | undefined): Promise<void> {
  if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
  running.child.kill('SIGKILL');
  await running.exited;
}

test('README quick start: init --yes, serve, sessions create/pair with the sandbox pair route, sessions list', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-quickstart-'));
  let serve: Running | undefined;
  let pair: Running | undefined;
  try {
    const gateway = (...args: string[]) => runCli(args, { cwd: dir });

    // terminal 1: init --yes, then the operator picks a free port in gateway.yaml and serves
    const init = await gateway('init', '--yes');
    assert.equal(init.code, 0, init.stderr);
    const configPath = join(dir, 'gateway.yaml');
    const written = readFileSync(configPath, 'utf8');
    assert.match(written, /^port: 3000$/m, written);
    assert.match(written, /^dataDir: \.\/data$/m, 'the data dir is relative, inside the working directory');
    const port = await freePort();
    writeFileSync(configPath, written.replace(/^port: 3000$/m, `port: ${port}`));
    const key = /^\s*masterKey:\s*(\S+)\s*$/m.exec(written)?.[1];
    assert.ok(key && key.startsWith('svc_master_'), 'gateway.yaml holds the master key');

    serve = launch(dir, ['serve']);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (serve!.child.exitCode !== null) throw new Error(`serve exited with ${serve!.child.exitCode}:\n${serve!.output()}`);
        return fetch(`${url}/api/health`).then((r) => r.ok, () => false);
      },
      15_000,
      `the daemon on ${url}\n${serve.output()}`,
    );
    // the key from gateway.yaml is the daemon's master key
    const authed = await fetch(`${url}/api/sessions`, { headers: { Authorization: `Bearer ${key}` } });
    assert.equal(authed.status, 200);

    // terminal 2: create and pair
    const created = await gateway('sessions', 'create', 'demo', '--engine', 'sandbox');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /created session demo \(engine sandbox, DISCONNECTED\)/);

    pair = launch(dir, ['sessions', 'pair', 'demo', '--timeout', '30']);
    // the QR is on the screen: pair started the session and drew it
    await waitFor(() => /gateway sandbox pair demo` to simulate the scan/.test(pair!.output()) || pair!.child.exitCode !== null, 15_000, 'the QR drawn by `sessions pair`');
    assert.equal(pair.child.exitCode, null, `pair ended early:\n${pair.output()}`);

    // terminal 3: the simulated phone scans it (the README's curl, with the key from gateway.yaml)
    const scanned = await fetch(`${url}/api/sandbox/sessions/demo/pair`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '+15550001111' }),
    });
    assert.equal(scanned.status, 200, await scanned.clone().text());
    assert.equal(((await scanned.json()) as { data: { success: boolean } }).data.success, true);

    assert.equal(await pair.exited, 0, pair.output());
    assert.match(pair.output(), /session demo CONNECTED: paired as \+15550001111/);

    const listed = await gateway('sessions', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as { name: string; engine: string; status: string; statusReason: string | null; phoneNumber?: string }[];
    const demo = rows.find((s) => s.name === 'demo');
    assert.ok(demo, listed.stdout);
    assert.equal(demo.engine, 'sandbox');
    assert.equal(demo.status, 'CONNECTED');
    assert.equal(demo.statusReason, null);
    assert.equal(demo.phoneNumber, '+15550001111');

    const table = await gateway('sessions', 'list');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /demo.*sandbox.*CONNECTED.*\+15550001111/);

    // SIGTERM stops the daemon cleanly
    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0, serve.output());
    assert.match(serve.output(), /"msg":"stopped"/);
    const unreachable = await gateway('sessions', 'list');
    assert.equal(unreachable.code, 3, 'with the daemon gone the CLI exits 3 (unreachable)');
    assert.match(unreachable.stderr, new RegExp(`cannot reach the gateway daemon at http://127\\.0\\.0\\.1:${port}`));
  } finally {
    await end(pair);
    await end(serve);
    rmSync(dir, { recursive: true, force: true });
  }
});
