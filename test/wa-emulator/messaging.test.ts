// 1:1 traffic between two Baileys clients through the emulator: text (PN and LID), image, read receipt, presence, typing.
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { downloadMediaMessage, proto } from '@whiskeysockets/baileys';
import {
  closeAll,
  startWithAliceAndBob,
  textOf,
  waitForEvent,
  waitForMessage,
  type TestClient,
  type WaEmulator,
} from '../support/wa-emulator/index.js';

/** A valid RGB PNG of `size`×`size` pixels with a deterministic pattern. */
function png(size: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (data: Buffer) => {
    let c = 0xffffffff;
    for (const byte of data) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) rows.set([x * 4, y * 4, (x + y) * 2], y * (1 + size * 3) + 1 + x * 3);
  }
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

describe('wa-emulator 1:1 messaging', () => {
  let emu: WaEmulator;
  let alice: TestClient;
  let bob: TestClient;

  before(async () => {
    ({ emu, alice, bob } = await startWithAliceAndBob());
  });
  after(() => closeAll(alice, bob, emu));

  it('exchanges text both ways by phone number', async () => {
    const atBob = waitForMessage(bob.sock, (m) => textOf(m) === 'hello bob');
    const sent = await alice.sock.sendMessage(bob.userJid, { text: 'hello bob' });
    const received = await atBob;
    assert.equal(received.key.id, sent!.key.id);
    assert.equal(received.key.remoteJid, alice.userJid);
    assert.equal(received.key.remoteJidAlt, alice.userLid);
    assert.equal(received.pushName, 'Alice');

    const atAlice = waitForMessage(alice.sock, (m) => textOf(m) === 'hi alice' && !m.key.fromMe);
    await bob.sock.sendMessage(received.key.remoteJid!, { text: 'hi alice' });
    assert.equal((await atAlice).key.remoteJid, bob.userJid);
  });

  it('exchanges text both ways by LID', async () => {
    const atBob = waitForMessage(bob.sock, (m) => textOf(m) === 'to your lid');
    await alice.sock.sendMessage(bob.userLid, { text: 'to your lid' });
    const received = await atBob;
    assert.equal(received.key.remoteJid, alice.userLid);
    assert.equal(received.key.remoteJidAlt, alice.userJid);

    const atAlice = waitForMessage(alice.sock, (m) => textOf(m) === 'lid reply');
    await bob.sock.sendMessage(received.key.remoteJid!, { text: 'lid reply' });
    assert.equal((await atAlice).key.remoteJid, bob.userLid);
  });

  it('sends an image whose bytes survive upload, relay and download', async () => {
    const image = png(48);
    const atBob = waitForMessage(bob.sock, (m) => !!m.message?.imageMessage);
    await alice.sock.sendMessage(bob.userJid, { image, caption: 'pattern', mimetype: 'image/png' });
    const received = await atBob;
    assert.equal(received.message!.imageMessage!.caption, 'pattern');
    assert.match(received.message!.imageMessage!.url!, new RegExp(`^https://${emu.mediaHost.replace(/\./g, '\\.')}/`));
    const downloaded = await downloadMediaMessage(received, 'buffer', {});
    assert.ok(downloaded.equals(image), 'downloaded image differs from the original');
    assert.equal(emu.control.mediaBlobs().length >= 1, true);
  });

  it('delivers a read receipt to the sender (status READ)', async () => {
    const atBob = waitForMessage(bob.sock, (m) => textOf(m) === 'please read');
    const sent = await alice.sock.sendMessage(bob.userJid, { text: 'please read' });
    const received = await atBob;
    await bob.sock.readMessages([received.key]);
    await alice.waitForStatus(sent!.key.id!, proto.WebMessageInfo.Status.READ);
  });

  it('relays presence and typing', async () => {
    const initial = waitForEvent(alice.sock, 'presence.update', (u) => u.id === bob.userJid);
    await alice.sock.presenceSubscribe(bob.userJid);
    assert.equal((await initial).presences[bob.userJid]?.lastKnownPresence, 'unavailable');

    const online = waitForEvent(alice.sock, 'presence.update', (u) => u.presences[bob.userJid]?.lastKnownPresence === 'available');
    await bob.sock.sendPresenceUpdate('available');
    await online;

    const typing = waitForEvent(alice.sock, 'presence.update', (u) => u.id === bob.userJid && u.presences[bob.userJid]?.lastKnownPresence === 'composing');
    await bob.sock.sendPresenceUpdate('composing', alice.userJid);
    await typing;

    const offline = waitForEvent(alice.sock, 'presence.update', (u) => u.presences[bob.userJid]?.lastKnownPresence === 'unavailable');
    await bob.sock.sendPresenceUpdate('unavailable');
    await offline;
  });

  it('talks to a virtual contact: the phone decrypts, answers, acks and reads', async () => {
    emu.control.createAccount({ phone: '15550009999', pushName: 'Carol' });
    const carol = '15550009999@s.whatsapp.net';
    const sent = await alice.sock.sendMessage(carol, { text: 'hi carol' });
    const inbox = await emu.control.waitForInbox('15550009999', (m) => m.text === 'hi carol');
    assert.equal(inbox.from, alice.userJid);
    assert.equal(inbox.id, sent!.key.id);
    await alice.waitForStatus(sent!.key.id!, proto.WebMessageInfo.Status.DELIVERY_ACK);

    const atAlice = waitForMessage(alice.sock, (m) => textOf(m) === 'hello from carol');
    const { id } = await emu.control.send('15550009999', alice.userJid, 'hello from carol');
    const received = await atAlice;
    assert.equal(received.key.id, id);
    assert.equal(received.key.remoteJid, carol);
    assert.equal(received.pushName, 'Carol');

    emu.control.sendReceipt('15550009999', alice.userJid, [sent!.key.id!], 'read');
    await alice.waitForStatus(sent!.key.id!, proto.WebMessageInfo.Status.READ);

    await alice.sock.readMessages([received.key]);
    await waitUntil(() => emu.control.receipts('15550009999').some((r) => r.id === id && r.type === 'read'));
    assert.deepEqual(emu.control.phoneFailures(), []);
  });

  it('a contact can send by LID without naming its phone number (withoutAlt): no remoteJidAlt', async () => {
    const atAlice = waitForMessage(alice.sock, (m) => textOf(m) === 'lid only');
    const { id } = await emu.control.send('15550009999', alice.userLid, 'lid only', { withoutAlt: true });
    const received = await atAlice;
    assert.equal(received.key.id, id);
    assert.equal(received.key.remoteJid, emu.control.account('15550009999')!.lid);
    assert.equal(received.key.remoteJidAlt, undefined);
    const stanza = emu.control.stanzas({ direction: 'out', tag: 'message' }).find((s) => s.node.attrs.id === id);
    assert.equal(stanza?.node.attrs.sender_pn, undefined);
    assert.deepEqual(emu.control.phoneFailures(), []);
  });

  it('records what the server saw', () => {
    const messages = emu.control.stanzas({ direction: 'in', tag: 'message', device: alice.jid });
    assert.ok(messages.length >= 5);
    assert.ok(messages.every((r) => r.node.attrs.id && typeof r.shape === 'string'));
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
