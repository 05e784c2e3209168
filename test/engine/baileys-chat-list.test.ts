// The chat list on the Baileys engine, against the emulator: chats from a history sync keep the state the phone gave them
// (name, archived, pinned, muted for good, unread count), a chat without messages is listed too, and a group the session
// is added to is named by its subject.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const MAIN = '15550411001';
const DORA = '15550412002';
const ERIN = '15550413003';
const jid = (digits: string) => `${digits}@s.whatsapp.net`;

describe('baileys chat list', () => {
  let target: BaileysTarget;
  let events: EventCollector;
  const chat = async (id: string) => {
    const res = await target.daemon.request('GET', `/api/sessions/main/chats/${encodeURIComponent(id)}`);
    return res.status === 200 ? res.body.data : undefined;
  };

  before(async () => {
    target = await startBaileysTarget();
    target.emu.control.createAccount({ phone: DORA, pushName: 'Dora' });
    target.emu.control.createAccount({ phone: ERIN, pushName: 'Erin' });
    events = await collectEvents(target.daemon);
    await target.pairedSession('main', MAIN);
    await target.emu.control.waitForOnline(target.emu.control.devices(MAIN)[0]!.jid);
  });

  after(async () => {
    events?.close();
    await target?.close();
  });

  it('stores the chats of a history sync with their state', async () => {
    const now = Math.floor(Date.now() / 1000);
    const message = (text: string, ago: number) => ({
      key: { remoteJid: jid(DORA), fromMe: false, id: `3EB0${randomBytes(10).toString('hex').toUpperCase()}` },
      messageTimestamp: now - ago,
      message: { conversation: text },
    });
    const quietGroup = '120363000000000777@g.us';
    await target.emu.control.syncHistory(
      MAIN,
      [message('old one', 300), message('old two', 200), message('old three', 100)],
      [
        { id: jid(DORA), name: 'Dora from history', archived: true, pinned: now - 50, muteEndTime: -1, unreadCount: 2, conversationTimestamp: now - 100 },
        { id: quietGroup, name: 'A quiet group', conversationTimestamp: now - 1000, unreadCount: 0 },
      ],
    );
    const sync = await events.next((e) => e.session === 'main' && e.event === 'history.sync' && e.payload.syncType === 'RECENT', 15_000, 'history.sync');
    assert.equal(sync.payload.messageCount, 3, JSON.stringify(sync.payload));
    assert.equal(sync.payload.chatCount, 2, 'the chats of the sync are counted, with or without messages');
    assert.equal(sync.payload.chats, undefined, 'the event carries their count, not the chats');

    const dora = await waitFor(() => chat(jid(DORA)), 10_000, 'the synced chat');
    assert.equal(dora.name, 'Dora from history');
    assert.equal(dora.archived, true);
    assert.equal(dora.pinned, true);
    assert.deepEqual([dora.muted, dora.muteEndTime], [true, null], 'muted for good');
    assert.equal(dora.unreadCount, 2, "the phone's unread count, not the three history messages");
    assert.equal(dora.lastMessage.text, 'old three');

    const group = await waitFor(() => chat(quietGroup), 10_000, 'the chat without messages');
    assert.deepEqual([group.name, group.isGroup, group.lastMessage, group.archived, group.pinned, group.muted], ['A quiet group', true, null, false, false, false]);

    // the history's state holds until the user changes it, and a new message after the sync counts as unread
    await target.emu.control.send(DORA, jid(MAIN), 'after the sync');
    await waitFor(async () => ((await chat(jid(DORA)))?.unreadCount === 3 ? true : undefined), 10_000, 'one more unread');
    const list = (await target.daemon.request('GET', '/api/sessions/main/chats?archived=true')).body.data.chats;
    assert.deepEqual(list.map((c: any) => c.chatId), [jid(DORA)]);
  });

  it('names a group by its subject, from the group events', async () => {
    const group = target.emu.control.createGroup(ERIN, 'Book club', [MAIN]);
    const view = await waitFor(() => chat(group.jid), 15_000, 'the group in the chat list');
    assert.equal(view.name, 'Book club');
    assert.equal(view.isGroup, true);
  });
});
