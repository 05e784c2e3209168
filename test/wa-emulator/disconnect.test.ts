// Disconnects: every injectable close code reaches Baileys as its DisconnectReason; logout and phone-side unlink give 401.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DisconnectReason } from '@whiskeysockets/baileys';
import {
  closeCode,
  pairByQr,
  startEmulator,
  TestClient,
  trustEmulator,
  waitForConnection,
  type CloseCode,
  type WaEmulator,
} from '../support/wa-emulator/index.js';

describe('wa-emulator disconnects', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;

  before(async () => {
    emu = await startEmulator();
    await trustEmulator(emu);
    alice = await pairByQr(emu, '15550001111');
    bob = await pairByQr(emu, '15550002222');
  });

  after(async () => {
    await alice?.close();
    await bob?.close();
    await emu?.close();
  });

  const codes: Array<[CloseCode, number]> = [
    [401, DisconnectReason.loggedOut],
    [403, DisconnectReason.forbidden],
    [408, DisconnectReason.timedOut],
    [440, DisconnectReason.connectionReplaced],
    [500, DisconnectReason.badSession],
    [503, DisconnectReason.unavailableService],
    [515, DisconnectReason.restartRequired],
  ];
  for (const [code, reason] of codes) {
    it(`injected ${code} reaches the client as statusCode ${reason}`, async () => {
      const closed = waitForConnection(alice.sock, (s) => s.connection === 'close');
      assert.equal(emu.control.dropConnection(alice.jid, code), true);
      assert.equal(closeCode(await closed), reason);
      await alice.reconnectAndWaitOpen();
    });
  }

  it('a bare socket close reaches the client as 428', async () => {
    const closed = waitForConnection(alice.sock, (s) => s.connection === 'close');
    emu.control.dropConnection(alice.jid, 500, 'socket');
    assert.equal(closeCode(await closed), DisconnectReason.connectionClosed);
    await alice.reconnectAndWaitOpen();
  });

  it('403 as a stream error works too', async () => {
    const closed = waitForConnection(alice.sock, (s) => s.connection === 'close');
    emu.control.dropConnection(alice.jid, 403, 'stream-error');
    assert.equal(closeCode(await closed), 403);
    await alice.reconnectAndWaitOpen();
  });

  it('a second login with the same creds replaces the first (440)', async () => {
    const closed = waitForConnection(alice.sock, (s) => s.connection === 'close');
    // another socket on the same auth, without ending the first one
    const twin = new TestClient(emu, alice.auth);
    try {
      assert.equal(closeCode(await closed), DisconnectReason.connectionReplaced);
      await waitForConnection(twin.sock, (s) => s.connection === 'open');
    } finally {
      await twin.close();
    }
    await alice.reconnectAndWaitOpen();
  });

  it('logout from the companion closes with 401 and the server forgets the device', async () => {
    const closed = waitForConnection(bob.sock, (s) => s.connection === 'close');
    await bob.sock.logout();
    assert.equal(closeCode(await closed), DisconnectReason.loggedOut);
    await waitUntil(() => emu.control.devices('15550002222').length === 0);
    const sock = await bob.reconnect();
    const refused = await waitForConnection(sock, (s) => s.connection === 'close');
    assert.equal(closeCode(refused), DisconnectReason.loggedOut);
  });

  it('unlink from the phone closes with 401 (device_removed), and the device cannot log in again', async () => {
    const closed = waitForConnection(alice.sock, (s) => s.connection === 'close');
    emu.control.unlink(alice.jid);
    const update = await closed;
    assert.equal(closeCode(update), DisconnectReason.loggedOut);
    assert.equal(emu.control.devices('15550001111').length, 0);
    const sock = await alice.reconnect();
    assert.equal(closeCode(await waitForConnection(sock, (s) => s.connection === 'close')), DisconnectReason.loggedOut);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
