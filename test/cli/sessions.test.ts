// `gateway status` and `gateway sessions …` against a real daemon: lifecycle, tables and --json, pairing by QR and by code, errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor, daemonEnv, launchCli } from '../helpers/cli.js';
import { startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const cliEnv = () => ({ PATH: process.env.PATH ?? '', ...daemonEnv(daemon) });

const gateway = cliFor(() => daemon);

const launch = (...args: string[]) => launchCli(args, { cwd: daemon.dataDir, env: cliEnv() });

const session = async (name: string) => (await daemon.request('GET', `/api/sessions/${name}`)).body.data;

describe('gateway status', { concurrency: true }, () => {
  test('prints version, uptime and session counts; --json is the raw health data', async () => {
    const [res, json] = await Promise.all([gateway('status'), gateway('--json', 'status')]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^gateway \d+\.\d+\.\d+\S* at http:\/\/127\.0\.0\.1:\d+: ok, up \d/);
    assert.match(res.stdout, /sessions: \d+ total, \d+ connected/);
    const health = JSON.parse(json.stdout);
    assert.equal(health.status, 'ok');
    assert.equal(typeof health.uptime, 'number');
    assert.deepEqual(Object.keys(health.sessions).sort(), ['connected', 'total']);
  });

  test('an unreachable daemon: non-zero exit, one-line error', async () => {
    const res = await gateway('--url', 'http://127.0.0.1:1', 'status');
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^error: cannot reach the gateway daemon at http:\/\/127\.0\.0\.1:1\b.*\n$/);
  });
});

describe('gateway sessions', { concurrency: true }, () => {
  test('create, list (table and --json), show', async () => {
    const [created, safe] = await Promise.all([
      gateway('sessions', 'create', 'alpha', '--engine', 'sandbox'),
      gateway('--json', 'sessions', 'create', 'beta', '--safe-mode', '--proxy', 'socks5://u:secret@proxy.example:1080', '--start'),
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /created session alpha \(engine sandbox, DISCONNECTED\)/);
    assert.equal(safe.code, 0, safe.stderr);
    const beta = JSON.parse(safe.stdout);
    assert.equal(beta.status, 'CONNECTING');
    assert.equal(beta.statusReason, 'SCAN_QR');
    assert.equal(beta.config.safeMode, true);
    assert.equal(beta.proxy, 'socks5://u:***@proxy.example:1080');

    const [list, table, show, showJson] = await Promise.all([
      gateway('--json', 'sessions', 'list'),
      gateway('sessions', 'list'),
      gateway('sessions', 'show', 'beta'),
      gateway('--json', 'sessions', 'show', 'alpha'),
    ]);
    assert.equal(list.code, 0, list.stderr);
    const rows = JSON.parse(list.stdout) as Array<{ name: string; status: string }>;
    assert.deepEqual(
      rows
        .filter((r) => r.name === 'alpha' || r.name === 'beta')
        .map((r) => [r.name, r.status])
        .sort(),
      [
        ['alpha', 'DISCONNECTED'],
        ['beta', 'CONNECTING'],
      ],
    );
    assert.match(table.stdout, /name.*engine.*status.*reason.*phone.*push name/);
    assert.match(table.stdout, /beta.*sandbox.*CONNECTING.*SCAN_QR/);

    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^name\s+beta$/m);
    assert.match(show.stdout, /^statusReason\s+SCAN_QR$/m);
    const alpha = JSON.parse(showJson.stdout);
    assert.equal(alpha.name, 'alpha');
    assert.equal(alpha.engine, 'sandbox');
  });

  test('start, stop, restart, logout, delete --yes', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'life' });
    const start = await gateway('sessions', 'start', 'life');
    assert.equal(start.code, 0, start.stderr);
    assert.match(start.stdout, /session life started/);
    assert.equal((await session('life')).status, 'CONNECTING');
    await daemon.request('POST', '/api/sandbox/sessions/life/pair', { phoneNumber: '+15550007001' });

    const stop = await gateway('sessions', 'stop', 'life');
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, /session life stopped/);
    assert.deepEqual([(await session('life')).status, (await session('life')).statusReason], ['DISCONNECTED', 'MANUAL_STOP']);

    const restart = await gateway('--json', 'sessions', 'restart', 'life');
    assert.equal(restart.code, 0, restart.stderr);
    assert.equal(JSON.parse(restart.stdout).success, true);
    await waitFor(async () => (await session('life')).status === 'CONNECTED', 15_000, 'life CONNECTED after restart');

    const logout = await gateway('sessions', 'logout', 'life');
    assert.equal(logout.code, 0, logout.stderr);
    assert.match(logout.stdout, /logged out/);
    assert.deepEqual([(await session('life')).status, (await session('life')).statusReason], ['DISCONNECTED', 'LOGGED_OUT']);

    const refused = await gateway('sessions', 'delete', 'life');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^error: .*pass --yes\n$/);
    assert.equal((await daemon.request('GET', '/api/sessions/life')).status, 200);

    const del = await gateway('sessions', 'delete', 'life', '--yes');
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /session life deleted/);
    assert.equal((await daemon.request('GET', '/api/sessions/life')).status, 404);
  });

  test('calls: --reject (with --reply) sets config.calls, --allow removes it; bad combinations are usage errors', async () => {
    assert.equal((await gateway('sessions', 'create', 'ringer', '--engine', 'sandbox')).code, 0);
    const set = await gateway('sessions', 'calls', 'ringer', '--reject', '--reply', 'please write instead');
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /every incoming call is rejected, and the caller gets the reply/);
    assert.deepEqual((await session('ringer')).config.calls, { reject: true, replyText: 'please write instead' });
    const json = JSON.parse((await gateway('--json', 'sessions', 'calls', 'ringer', '--reject')).stdout);
    assert.deepEqual(json.config.calls, { reject: true });
    const allow = await gateway('sessions', 'calls', 'ringer', '--allow');
    assert.equal(allow.code, 0, allow.stderr);
    assert.equal((await session('ringer')).config.calls, undefined);
    for (const args of [[], ['--reject', '--allow'], ['--allow', '--reply', 'x']]) {
      const bad = await gateway('sessions', 'calls', 'ringer', ...args);
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
    }
    const control = await gateway('sessions', 'calls', 'ringer', '--reject', '--reply', 'bell \u0007');
    assert.equal(control.code, 1);
    assert.match(control.stderr, /VALIDATION_FAILED/);
  });

  test('a daemon error prints CODE: message on one line and exits non-zero', async () => {
    const [res, stop] = await Promise.all([gateway('sessions', 'show', 'nope'), gateway('sessions', 'stop', 'nope')]);
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^error: SESSION_NOT_FOUND: .*nope.*\n$/);
    assert.equal(stop.code, 1);
    assert.match(stop.stderr, /^error: SESSION_NOT_FOUND: /);
  });

  test('pair --code: prints XXXX-XXXX, then exits 0 once the phone enters the code', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'bycode' });
    const run = launch('sessions', 'pair', 'bycode', '--code', '+15550001234', '--timeout', '60');
    const code = (await run.waitForOutput(/pairing code for \+15550001234: ([0-9A-Z]{4}-[0-9A-Z]{4})\n/, 'the pairing code'))[1]!;
    assert.match(code, /^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    const paired = await daemon.request('POST', '/api/sandbox/sessions/bycode/pair', { phoneNumber: '+15550001234', code });
    assert.equal(paired.status, 200, JSON.stringify(paired.body));
    const res = await run.exited;
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /session bycode CONNECTED: paired as \+15550001234/);
    assert.equal((await session('bycode')).status, 'CONNECTED');
  });

  test('pair --code --json --no-wait prints the raw data and returns', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'nowait' });
    const res = await gateway('--json', 'sessions', 'pair', 'nowait', '--code', '+15550001235', '--no-wait');
    assert.equal(res.code, 0, res.stderr);
    const data = JSON.parse(res.stdout);
    assert.match(data.code, /^[0-9A-Z]{8}$/);
    assert.equal(data.phoneNumber, '+15550001235');
  });

  test('pair (QR): starts the session, draws the QR, completes when the phone scans it', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'byqr' });
    const run = launch('sessions', 'pair', 'byqr', '--timeout', '60');
    // a sandbox session's QR is scanned by `gateway sandbox pair`, and the instruction says so
    await run.waitForOutput(/sandbox session: run `gateway sandbox pair byqr` to simulate the scan/, 'the QR drawing');
    assert.match(run.stdout(), /[█▀▄]{10}/);
    assert.doesNotMatch(run.stdout(), /scan with WhatsApp/);
    assert.equal((await session('byqr')).statusReason, 'SCAN_QR');
    const paired = await daemon.request('POST', '/api/sandbox/sessions/byqr/pair', { phoneNumber: '+15550001300', pushName: 'Quinn' });
    assert.equal(paired.status, 200, JSON.stringify(paired.body));
    const res = await run.exited;
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /session byqr CONNECTED: paired as \+15550001300 \(Quinn\)/);
  });

  test('pair fails with the reason when the session drops', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'dropped' });
    const run = launch('sessions', 'pair', 'dropped', '--timeout', '60');
    await run.waitForOutput(/to simulate the scan/, 'the QR drawing');
    await daemon.request('POST', '/api/sessions/dropped/stop', {});
    const res = await run.exited;
    assert.equal(res.code, 1);
    assert.match(res.stderr, /^error: session dropped DISCONNECTED \(MANUAL_STOP\)/);
  });

  test('pair gives up after --timeout', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'slow' });
    const slow = await gateway('sessions', 'pair', 'slow', '--timeout', '1');
    assert.equal(slow.code, 1);
    assert.match(slow.stderr, /^error: session slow was not paired within 1 s \(status CONNECTING, SCAN_QR\)\n$/);
  });
});
