// The emulator's load figures for benchmarks: connection attempts and their peak in any 1 s window, connections open,
// companions active, and messages the virtual phones decrypted from other accounts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionStats, pairByQr, startEmulator, trustEmulator, waitForConnection, type EmulatorStats, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';

describe('ConnectionStats', () => {
  it('counts attempts and finds the most in any window of 1,000 ms, from a given time on', () => {
    const stats = new ConnectionStats();
    for (const at of [10_000, 10_100, 10_200, 10_999, 11_000, 11_500, 15_000]) stats.attempted(at);
    assert.equal(stats.attemptsSince(), 7);
    // [10000, 11000) holds four; 11000 starts the next window
    assert.equal(stats.peakPerSecond(), 4);
    assert.equal(stats.attemptsSince(11_000), 3);
    assert.equal(stats.peakPerSecond(11_000), 2);
    assert.equal(stats.peakPerSecond(20_000), 0);
  });

  it('counts attempts evenly spaced at exactly 1 s as one per second', () => {
    const stats = new ConnectionStats();
    for (let i = 0; i < 10; i += 1) stats.attempted(50_000 + i * 1000);
    assert.equal(stats.peakPerSecond(), 1);
  });
});

describe('emulator stats', () => {
  let emu: WaEmulator;
  let alice: TestClient | undefined;
  const stats = async (since?: number): Promise<EmulatorStats> => (await fetch(`${emu.controlUrl}/control/stats${since ? `?since=${since}` : ''}`)).json() as Promise<EmulatorStats>;

  before(async () => {
    emu = await startEmulator();
    await trustEmulator(emu);
  });

  after(async () => {
    await alice?.close();
    await emu?.close();
  });

  it('reports attempts, open connections, active companions and messages decrypted, over HTTP too', async () => {
    const before = emu.control.stats();
    assert.deepEqual(before, { connectionAttempts: 0, peakAttemptsPerSecond: 0, connectionsOpen: 0, devicesActive: 0, phoneMessages: 0 });
    emu.control.createAccount({ phone: '15550301111', pushName: 'Alice' });
    emu.control.createAccount({ phone: '15550302222', pushName: 'Bob' });
    // pairing is two connections: the registration, and the login after 515
    alice = await pairByQr(emu, '15550301111');
    await emu.control.waitForOnline(alice.jid);
    const paired = await stats();
    assert.equal(paired.connectionAttempts, 2);
    assert.equal(paired.peakAttemptsPerSecond >= 1 && paired.peakAttemptsPerSecond <= 2, true, JSON.stringify(paired));
    assert.equal(paired.connectionsOpen, 1);
    assert.equal(paired.devicesActive, 1);

    // Bob's phone decrypts Alice's message; Alice's own phone gets a copy, which is not counted
    await alice.sock.sendMessage('15550302222@s.whatsapp.net', { text: 'counted' });
    await emu.control.waitForInbox('15550302222', (m) => m.text === 'counted');
    assert.equal((await stats()).phoneMessages, 1);

    const reconnectedAt = Date.now();
    await alice.reconnect();
    await waitForConnection(alice.sock, (s) => s.connection === 'open');
    const since = await stats(reconnectedAt);
    assert.equal(since.connectionAttempts, 1);
    assert.equal(since.peakAttemptsPerSecond, 1);
    assert.equal((await stats()).connectionAttempts, 3);

    await alice.close();
    alice = undefined;
    const deadline = Date.now() + 5_000;
    while (emu.control.stats().connectionsOpen > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(emu.control.stats().connectionsOpen, 0);
    assert.equal(emu.control.stats().devicesActive, 0);
  });
});
