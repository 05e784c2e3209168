// `gateway events tail` against a real daemon: it outlives a daemon restart (says so on stderr, reconnects, prints the
// events after it), stops on SIGTERM with 0, and stops at once on a refused key or when no daemon was ever reached.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonEnv, launchCli, runCli } from '../helpers/cli.js';
import { freePort, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { ExitCode } from '../../src/cli/exit-codes.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-tail-'));
let daemon: TestDaemon | undefined;
after(async () => {
  await daemon?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

function launchTail(env: Record<string, string>, ...args: string[]) {
  const tail = launchCli(['events', 'tail', ...args], { cwd: dataDir, env, killAfterMs: 120_000 });
  return { ...tail, waitUntil: (check: () => boolean, what: string) => tail.waitUntil(check, what, 60_000) };
}

const inbound = (d: TestDaemon, text: string) => d.request('POST', '/api/sandbox/sessions/tail/inbound', { from: '+15550300001', type: 'text', text });

describe('gateway events tail', () => {
  test('reconnects after the daemon restarts and prints the events that follow', async () => {
    const port = await freePort();
    daemon = await startDaemon({ dataDir, port, env: { GATEWAY_LOG_LEVEL: 'warn' } });
    await pairedSession(daemon, 'tail', '+15550300000');
    const tail = launchTail(daemonEnv(daemon), '--json', '--events', 'message.received');
    await tail.waitUntil(() => tail.stderr().includes('streaming events from'), 'the stream to open');
    assert.equal((await inbound(daemon, 'before the restart')).status, 200);
    await tail.waitUntil(() => tail.stdout().includes('before the restart'), 'the first event');

    assert.equal(await daemon.stop(), 0);
    await tail.waitUntil(() => tail.stderr().includes('daemon unreachable, retrying…'), 'the outage notice');
    daemon = await startDaemon({ dataDir, port, env: { GATEWAY_LOG_LEVEL: 'warn' } });
    await waitFor(async () => (await daemon!.request('GET', '/api/sessions/tail')).body.data.status === 'CONNECTED', 30_000, 'the session back');
    await tail.waitUntil(() => tail.stderr().includes('reconnected'), 'the reconnection notice');
    assert.equal((await inbound(daemon, 'after the restart')).status, 200);
    await tail.waitUntil(() => tail.stdout().includes('after the restart'), 'the event after the restart');

    tail.child.kill('SIGTERM');
    const res = await tail.exited;
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { event: string; payload: { text?: string } });
    assert.deepEqual(lines.map((e) => [e.event, e.payload.text]), [
      ['message.received', 'before the restart'],
      ['message.received', 'after the restart'],
    ]);
    assert.equal(res.stderr.match(/daemon unreachable/g)?.length, 1, 'one notice for the outage, not one per attempt');
    assert.doesNotMatch(res.stderr, /^error/m);
  });

  test('--after starts from a point of the event log: every event of the session after it, then the live ones, each once', async () => {
    assert.ok(daemon);
    const tail = launchTail(daemonEnv(daemon), '--json', '--session', 'tail', '--events', 'message.received', '--after', '0');
    await tail.waitUntil(() => tail.stdout().includes('after the restart'), 'the past events');
    assert.equal((await inbound(daemon, 'live again')).status, 200);
    await tail.waitUntil(() => tail.stdout().includes('live again'), 'the live event');
    tail.child.kill('SIGTERM');
    const res = await tail.exited;
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { seq: number; payload: { text?: string } });
    assert.deepEqual(lines.map((e) => e.payload.text), ['before the restart', 'after the restart', 'live again']);
    assert.ok(lines.every((e, i) => i === 0 || e.seq > lines[i - 1]!.seq), 'in the order of the log');
    const human = await runCli(['events', 'tail', '--after', '0'], { cwd: dataDir, env: daemonEnv(daemon) });
    assert.equal(human.code, ExitCode.Failure, 'a bare number without --session is refused at once');
    assert.match(human.stderr, /session/);
  });

  test('a refused key ends the tail at once, without retrying', async () => {
    assert.ok(daemon);
    const res = await runCli(['events', 'tail'], { cwd: dataDir, env: { GATEWAY_URL: daemon.url, GATEWAY_MASTER_KEY: 'svc_master_wrong_0000000000000000000000000' } });
    assert.equal(res.code, ExitCode.Failure);
    assert.match(res.stderr, /^error: [A-Z_]+: /);
    assert.doesNotMatch(res.stderr, /retrying/);
  });

  test('a daemon that was never reached is an error at once', async () => {
    const res = await runCli(['events', 'tail'], { cwd: dataDir, env: { GATEWAY_URL: `http://127.0.0.1:${await freePort()}` } });
    assert.equal(res.code, ExitCode.Unreachable);
    assert.match(res.stderr, /^error: cannot reach the gateway daemon/);
  });
});
