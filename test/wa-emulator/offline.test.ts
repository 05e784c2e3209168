// A disconnected companion gets what was sent meanwhile (offline queue) when it logs in again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  closeAll,
  startWithAliceAndBob,
  textOf,
  waitForMessage,
  type TestClient,
  type WaEmulator,
} from '../support/wa-emulator/index.js';

describe('wa-emulator offline queue', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;

  before(async () => {
    ({ emu, alice, bob } = await startWithAliceAndBob([{ phone: '15550005555', pushName: 'Erin' }]));
  });
  after(() => closeAll(alice, bob, emu));

  it('queues messages for a disconnected device and delivers them on reconnect', async () => {
    // a first message, so the second one goes over an existing Signal session as well
    const first = waitForMessage(bob.sock, (m) => textOf(m) === 'while online');
    await alice.sock.sendMessage(bob.userJid, { text: 'while online' });
    await first;

    await bob.close();
    await waitUntil(() => !emu.control.isOnline(bob.jid));
    await alice.sock.sendMessage(bob.userJid, { text: 'while you were away' });
    await emu.control.send('15550005555', bob.userJid, 'erin says hi');
    await waitUntil(() => emu.control.offlineQueue(bob.jid) >= 2);

    const sock = await bob.reconnect();
    const fromAlice = waitForMessage(sock, (m) => textOf(m) === 'while you were away');
    const fromErin = waitForMessage(sock, (m) => textOf(m) === 'erin says hi');
    const types: string[] = [];
    sock.ev.on('messages.upsert', ({ type }) => types.push(type));
    assert.equal((await fromAlice).key.remoteJid, alice.userJid);
    assert.equal((await fromErin).pushName, 'Erin');
    assert.ok(types.includes('append'), `offline messages arrive as 'append', got ${types.join(',')}`);
    assert.equal(emu.control.offlineQueue(bob.jid), 0);
  });

  it('delivers live again after the backlog', async () => {
    const live = waitForMessage(bob.sock, (m, type) => textOf(m) === 'live again' && type === 'notify');
    await alice.sock.sendMessage(bob.userJid, { text: 'live again' });
    await live;
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
