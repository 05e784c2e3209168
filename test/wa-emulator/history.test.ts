// History with media: the phone uploads a file as WhatsApp clients do, then syncs a chat history holding a message
// that points at it; a companion with Baileys' history defaults receives it in messaging-history.set and downloads it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { downloadMediaMessage, proto } from '@whiskeysockets/baileys';
import { pairByQr, startEmulator, trustEmulator, waitForEvent, type TestClient, type WaEmulator } from '../support/wa-emulator/index.js';
import { quietLibsignal } from '../engine/targets.js';
import { png } from '../engine/samples.js';

const ALICE = '15550701111';
const CAROL = '15550703333';

describe('wa-emulator history with media', () => {
  let emu: WaEmulator;
  let alice: TestClient;

  before(async () => {
    quietLibsignal();
    emu = await startEmulator();
    await trustEmulator(emu);
    emu.control.createAccount({ phone: ALICE, pushName: 'Alice' });
    emu.control.createAccount({ phone: CAROL, pushName: 'Carol' });
    alice = await pairByQr(emu, ALICE, { historySync: true });
  });

  after(async () => {
    await alice?.close();
    await emu?.close();
  });

  it('an image in a history sync arrives with its media fields and downloads to the same bytes', async () => {
    const image = png(32);
    const media = await emu.control.uploadMedia(image, 'image');
    const id = '3EB0HISTORY0000000001';
    const synced = waitForEvent(alice.sock, 'messaging-history.set', (set) => set.messages.some((m) => m.key.id === id));
    await emu.control.syncHistory(ALICE, [
      {
        key: { remoteJid: `${CAROL}@s.whatsapp.net`, fromMe: false, id },
        messageTimestamp: Math.floor(Date.now() / 1000) - 3600,
        message: { imageMessage: { ...media, mimetype: 'image/png', caption: 'an old picture' } },
      },
    ]);
    const set = await synced;
    assert.equal(set.syncType, proto.HistorySync.HistorySyncType.RECENT);
    const message = set.messages.find((m) => m.key.id === id)!;
    assert.equal(message.message?.imageMessage?.caption, 'an old picture');
    const bytes = (await downloadMediaMessage(message, 'buffer', {})) as Buffer;
    assert.ok(bytes.equals(image));
  });

  it('a history request (fetchMessageHistory) is answered with an ON_DEMAND sync of the older messages, naming the request', async () => {
    const base = Math.floor(Date.now() / 1000) - 86_400;
    const older = [1, 2, 3, 4].map((n) => ({
      key: { remoteJid: `${CAROL}@s.whatsapp.net`, fromMe: n === 2, id: `3EB0OLDER00000000000${n}` },
      messageTimestamp: base + n * 60,
      message: { conversation: `older ${n}` },
    }));
    emu.control.seedOlderMessages(ALICE, CAROL, older);
    // the anchor: the fourth, so the three before it are older; two are asked for
    const anchor = { remoteJid: `${CAROL}@s.whatsapp.net`, fromMe: false, id: older[3]!.key.id };
    const answered = waitForEvent(alice.sock, 'messaging-history.set', (set) => set.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND);
    const requestId = await alice.sock.fetchMessageHistory(2, anchor, (base + 4 * 60) * 1000);
    const set = await answered;
    assert.equal(set.peerDataRequestSessionId, requestId);
    assert.deepEqual(set.messages.map((m) => m.message?.conversation), ['older 2', 'older 3']);
    assert.equal(set.messages[0]!.key.fromMe, true);
    const [request] = emu.control.historyRequests(ALICE).filter((r) => r.id === requestId);
    assert.deepEqual({ chatJid: request!.chatJid, count: request!.count, oldestMsgId: request!.oldestMsgId, answered: request!.answered }, { chatJid: `${CAROL}@s.whatsapp.net`, count: 2, oldestMsgId: anchor.id, answered: 2 });

    // nothing older than the first: an empty answer
    const empty = waitForEvent(alice.sock, 'messaging-history.set', (s) => s.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND && s.messages.length === 0);
    const second = await alice.sock.fetchMessageHistory(10, { ...anchor, id: older[0]!.key.id }, (base + 60) * 1000);
    assert.equal((await empty).peerDataRequestSessionId, second);
  });

  it('the upload is really encrypted: another media key does not open it', async () => {
    const bytes = Buffer.from('some document bytes, long enough for two AES blocks');
    const media = await emu.control.uploadMedia(bytes, 'document');
    assert.ok(emu.control.mediaBlobs().some((b) => b.path === media.directPath && b.size === 64 + 10));
    const key = { remoteJid: `${CAROL}@s.whatsapp.net`, fromMe: false, id: '3EB0HISTORY0000000002' };
    const opened = (await downloadMediaMessage({ key, message: { documentMessage: { ...media, mimetype: 'text/plain' } } }, 'buffer', {})) as Buffer;
    assert.ok(opened.equals(bytes));
    const wrong = { ...media, mediaKey: Buffer.alloc(32, 7) };
    await assert.rejects(async () => {
      const garbled = (await downloadMediaMessage({ key, message: { documentMessage: { ...wrong, mimetype: 'text/plain' } } }, 'buffer', {})) as Buffer;
      assert.ok(!garbled.equals(bytes));
      throw new Error('decrypted to other bytes');
    });
  });
});
