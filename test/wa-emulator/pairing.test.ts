// Pairing real Baileys clients with the emulator by QR and by pairing code, then logging in again with the saved creds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  closeCode,
  memoryAuth,
  pairByCode,
  pairByQr,
  startEmulator,
  TestClient,
  textOf,
  trustEmulator,
  waitForConnection,
  waitForEvent,
  waitForMessage,
  type WaEmulator,
} from '../support/wa-emulator/index.js';

describe('wa-emulator pairing', () => {
  let emu: WaEmulator;
  const clients: TestClient[] = [];

  before(async () => {
    emu = await startEmulator();
    await trustEmulator(emu);
  });

  after(async () => {
    for (const client of clients) await client.close();
    await emu.close();
  });

  it('pairs by QR, closes with 515, logs in and reports the account', async () => {
    emu.control.createAccount({ phone: '15550001111', pushName: 'Alice' });
    const client = new TestClient(emu, memoryAuth());
    clients.push(client);
    const { qr } = await waitForConnection(client.sock, (s) => !!s.qr);
    assert.match(qr!, /^https:\/\/wa\.me\/settings\/linked_devices#/);
    const isNewLogin = waitForConnection(client.sock, (s) => s.isNewLogin === true);
    const closed = waitForConnection(client.sock, (s) => s.connection === 'close');
    const device = await emu.control.scanQr(qr!, '15550001111');
    await isNewLogin;
    assert.equal(closeCode(await closed), 515);
    assert.equal(device.jid, '15550001111:1@s.whatsapp.net');
    assert.equal(client.auth.state.creds.me?.id, device.jid);
    assert.equal(client.auth.state.creds.me?.lid, device.lid);
    assert.equal(client.auth.state.creds.me?.name, 'Alice');

    await client.reconnectAndWaitOpen();
    assert.equal(client.sock.user?.id, device.jid);
    assert.ok(emu.control.isOnline(device.jid));
    assert.deepEqual(emu.control.devices('15550001111').map((d) => d.jid), [device.jid]);
    // the login path Baileys took, as recorded
    const shapes = emu.control.shapes('in');
    for (const shape of ['iq xmlns=encrypt type=get <count>', 'iq xmlns=encrypt type=set <registration>', 'iq xmlns=passive type=set <active>', 'iq xmlns=encrypt type=get <digest>']) {
      assert.ok(shapes.includes(shape), `expected ${shape} in ${shapes.join(', ')}`);
    }
  });

  it('pairs a second device of the same account by QR as device 2', async () => {
    const client = await pairByQr(emu, '15550001111');
    clients.push(client);
    assert.equal(client.jid, '15550001111:2@s.whatsapp.net');
    assert.equal(emu.control.devices('15550001111').length, 2);
  });

  it('pairs a business account by pairing code and logs in', async () => {
    emu.control.createAccount({ phone: '15550002222', pushName: 'Shop', business: true });
    const { client, code } = await pairByCode(emu, '15550002222');
    clients.push(client);
    assert.match(code, /^[1-9A-HJ-NP-Z]{8}$/);
    assert.equal(client.jid, '15550002222:1@s.whatsapp.net');
    assert.equal(client.auth.state.creds.registered, true);
    assert.equal(client.auth.state.creds.platform, 'smba');
    assert.equal(client.auth.state.creds.me?.name, 'Shop');
    assert.ok(emu.control.isOnline(client.jid));
  });

  it("bootstraps a client that keeps Baileys' history defaults: app-state key, empty history, no 20 s wait", async () => {
    const client = new TestClient(emu, memoryAuth(), { historySync: true });
    clients.push(client);
    const { qr } = await waitForConnection(client.sock, (s) => !!s.qr);
    const closed = waitForConnection(client.sock, (s) => s.connection === 'close');
    await emu.control.scanQr(qr!, '15550004444');
    await closed;
    const sock = await client.reconnect();
    const history = waitForEvent(sock, 'messaging-history.set', () => true, 5_000);
    await waitForConnection(sock, (s) => s.connection === 'open' && s.receivedPendingNotifications === true);
    const { chats, isLatest } = await history;
    assert.deepEqual(chats, []);
    assert.equal(isLatest, true);
    emu.control.createAccount({ phone: '15550005555', pushName: 'Erin' });
    const live = waitForMessage(sock, (m, type) => textOf(m) === 'right away' && type === 'notify', 5_000);
    await emu.control.send('15550005555', client.userJid, 'right away');
    await live;
    assert.ok(client.auth.state.creds.myAppStateKeyId);
    await sock.chatModify({ archive: true, lastMessages: [] }, '15550005555@s.whatsapp.net');
  });

  it('can end the connection after a pairing-code login with a bare close instead of 515 (restart: socket)', async () => {
    emu.control.createAccount({ phone: '15550004747', pushName: 'Dora' });
    const client = new TestClient(emu, memoryAuth());
    clients.push(client);
    await waitForConnection(client.sock, (s) => !!s.qr);
    const code = await client.sock.requestPairingCode('15550004747');
    const isNewLogin = waitForConnection(client.sock, (s) => s.isNewLogin === true);
    const closed = waitForConnection(client.sock, (s) => s.connection === 'close');
    const device = await emu.control.enterPairingCode('15550004747', code, 5_000, 'socket');
    await isNewLogin;
    assert.equal(closeCode(await closed), 428);
    await client.reconnectAndWaitOpen();
    assert.equal(client.sock.user?.id, device.jid);
  });

  it('rejects a wrong pairing code', async () => {
    const client = new TestClient(emu, memoryAuth());
    clients.push(client);
    await waitForConnection(client.sock, (s) => !!s.qr);
    await client.sock.requestPairingCode('15550003333');
    await assert.rejects(emu.control.enterPairingCode('15550003333', 'AAAA-AAAA'), /wrong pairing code/);
    assert.equal(emu.control.devices('15550003333').length, 0);
  });

  it('logs in again after a restart with the same creds', async () => {
    const [first] = clients;
    await first!.reconnectAndWaitOpen();
    assert.ok(emu.control.isOnline(first!.jid));
  });

  it('refuses a login whose noise key does not match (401)', async () => {
    const stranger = memoryAuth();
    stranger.state.creds.me = { id: '15550001111:1@s.whatsapp.net', name: 'x' };
    const client = new TestClient(emu, stranger);
    clients.push(client);
    const closed = await waitForConnection(client.sock, (s) => s.connection === 'close');
    assert.equal(closeCode(closed), 401);
  });
});
