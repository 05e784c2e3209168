// `gateway sandbox pair` plays the phone of a sandbox session, and `gateway sessions pair` on a sandbox session says to
// run it (no phone can scan a sandbox QR); against a real daemon.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor, daemonEnv, launchCli } from '../helpers/cli.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);
const session = async (name: string) => (await daemon.request('GET', `/api/sessions/${name}`)).body.data;

const launch = (...args: string[]) => launchCli(args, { cwd: daemon.dataDir, env: daemonEnv(daemon) });

describe('gateway sandbox pair', { concurrency: true }, () => {
  test('starts a stopped sandbox session and pairs it as the given phone', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'sb1', engine: 'sandbox' });
    const paired = await gateway('sandbox', 'pair', 'sb1', '--phone', '+15550001400', '--push-name', 'Pat');
    assert.equal(paired.code, 0, paired.stderr);
    assert.equal(paired.stdout, 'session sb1 CONNECTED: paired as +15550001400 (Pat)\n');
    const now = await session('sb1');
    assert.equal(now.status, 'CONNECTED');
    assert.equal(now.pushName, 'Pat');
  });

  test('--json prints the connected session', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'sb2', engine: 'sandbox', start: true });
    const paired = await gateway('--json', 'sandbox', 'pair', 'sb2', '--business', '--business-name', 'Shop');
    assert.equal(paired.code, 0, paired.stderr);
    const data = JSON.parse(paired.stdout);
    assert.equal(data.name, 'sb2');
    assert.equal(data.status, 'CONNECTED');
    assert.equal(data.businessName, 'Shop');
  });

  test('sessions pair on a sandbox session says to run sandbox pair, which completes it', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'sb3', engine: 'sandbox' });
    const pairing = launch('sessions', 'pair', 'sb3', '--timeout', '60');
    await pairing.waitForOutput(/sandbox session: run `gateway sandbox pair sb3` to simulate the scan/, 'the sandbox hint');
    const scanned = await gateway('sandbox', 'pair', 'sb3', '--phone', '+15550001401');
    assert.equal(scanned.code, 0, scanned.stderr);
    const res = await pairing.exited;
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stdout, /scan with WhatsApp/);
    assert.match(res.stdout, /session sb3 CONNECTED: paired as \+15550001401/);
  });

  test('sessions pair --code on a sandbox session gives the sandbox pair command that enters the code', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'sb4', engine: 'sandbox', start: true });
    const pairing = launch('sessions', 'pair', 'sb4', '--code', '+15550001402', '--timeout', '60');
    const [, command] = await pairing.waitForOutput(/sandbox session: run `(gateway sandbox pair sb4 --code [0-9A-Z]{4}-[0-9A-Z]{4})` to simulate entering the code/, 'the sandbox hint');
    const entered = await gateway(...command!.split(' ').slice(1));
    assert.equal(entered.code, 0, entered.stderr);
    assert.match(entered.stdout, /session sb4 CONNECTED: paired as \+15550001402/);
    assert.equal((await pairing.exited).code, 0);
  });

  test('a wrong code and a session already paired are the daemon refusals, one line each', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'sb5', engine: 'sandbox', start: true });
    await daemon.request('POST', '/api/sessions/sb5/pairing/code', { phoneNumber: '+15550001403' });
    const wrong = await gateway('sandbox', 'pair', 'sb5', '--code', 'AAAA-AAAA');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^error: VALIDATION_FAILED: the pairing code does not match the one the session requested\n$/);
    assert.equal((await gateway('sandbox', 'pair', 'sb5')).code, 0);
    const again = await gateway('sandbox', 'pair', 'sb5');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: SESSION_ALREADY_PAIRED: /);
  });

  test('a Baileys session is refused before anything is sent, and the message says how to pair it', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'real', engine: 'baileys' });
    const refused = await gateway('sandbox', 'pair', 'real');
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, 'error: session real runs on the baileys engine, not the sandbox: pair it with `gateway sessions pair real` and a phone\n');
    assert.equal((await session('real')).status, 'DISCONNECTED');
  });
});
