// The chat list (issue 30): every chat of a session by last activity, with its last message, unread count, state and
// labels, kept current from messages and chat events; filtered and cursor-paged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'alice', '+15550750001');
});
after(() => daemon?.cleanup());

const inbound = (from: string, text: string) => daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from, type: 'text', text });
const pause = () => new Promise((done) => setTimeout(done, 5));
const chats = async (query = '') => {
  const res = await daemon.request('GET', `/api/sessions/alice/chats${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as { chats: any[]; nextCursor: string | null };
};

test('chats by last activity with their last message and unread count; a reply reads the chat', async () => {
  await inbound('+15550751111', 'hi from bob');
  await pause();
  await inbound('+15550752222', 'carol 1');
  await pause();
  await inbound('+15550752222', 'carol 2');
  await pause();
  await inbound('+15550751111', 'bob again');
  await pause();
  const sent = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: '+15550751111', type: 'text', text: 'answer to bob' });
  assert.equal(sent.status, 200);
  const list = await waitFor(async () => {
    const page = await chats();
    return page.chats.length === 2 && page.chats[0].lastMessage?.text === 'answer to bob' ? page : undefined;
  });
  const [bob, carol] = list.chats;
  assert.equal(bob.chatId, '15550751111@s.whatsapp.net');
  assert.equal(bob.name, '+15550751111');
  assert.equal(bob.phoneNumber, '+15550751111');
  assert.equal(bob.unreadCount, 0, 'the reply read what came before it');
  assert.deepEqual({ ...bob.lastMessage, timestamp: undefined }, { messageId: sent.body.data.messageId, type: 'text', text: 'answer to bob', timestamp: undefined, fromMe: true, status: bob.lastMessage.status });
  assert.ok(['sent', 'delivered', 'read'].includes(bob.lastMessage.status));
  assert.equal(carol.chatId, '15550752222@s.whatsapp.net');
  assert.equal(carol.unreadCount, 2);
  assert.equal(carol.lastMessage.text, 'carol 2');
  assert.equal(carol.lastMessage.fromMe, false);
  assert.deepEqual([carol.archived, carol.pinned, carol.muted, carol.isGroup, carol.labels], [false, false, false, false, []]);
  assert.equal(list.nextCursor, null);

  const one = await daemon.request('GET', '/api/sessions/alice/chats/+15550752222');
  assert.equal(one.status, 200);
  assert.deepEqual(one.body.data, carol);
  const unknown = await daemon.request('GET', '/api/sessions/alice/chats/+15550759999');
  assert.equal(unknown.status, 404);
});

test('chat events archive, mute and read it; filters and the cursor page through the list', async () => {
  for (const [action, extra] of [['archive', {}], ['mute', { muteUntil: '2099-01-01T00:00:00.000Z' }], ['read', {}]] as const) {
    const res = await daemon.request('POST', '/api/sandbox/sessions/alice/chats', { chatId: '+15550752222', action, ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  const carol = await waitFor(async () => {
    const chat = (await daemon.request('GET', '/api/sessions/alice/chats/15550752222@s.whatsapp.net')).body.data;
    return chat.archived && chat.muted && chat.unreadCount === 0 ? chat : undefined;
  });
  assert.equal(carol.muteEndTime, '2099-01-01T00:00:00.000Z');
  assert.deepEqual((await chats('?archived=true')).chats.map((c) => c.chatId), ['15550752222@s.whatsapp.net']);
  assert.deepEqual((await chats('?archived=false')).chats.map((c) => c.chatId), ['15550751111@s.whatsapp.net']);
  await daemon.request('POST', '/api/sandbox/sessions/alice/chats', { chatId: '+15550752222', action: 'unread' });
  await waitFor(async () => ((await chats('?unread=true')).chats.length === 1 ? true : undefined));
  assert.equal((await chats('?groups=true')).chats.length, 0);

  const first = await chats('?limit=1');
  assert.equal(first.chats.length, 1);
  assert.ok(first.nextCursor);
  const second = await chats(`?limit=1&cursor=${encodeURIComponent(first.nextCursor!)}`);
  assert.equal(second.chats.length, 1);
  assert.notEqual(second.chats[0].chatId, first.chats[0].chatId);
  const third = await chats(`?limit=1&cursor=${encodeURIComponent(second.nextCursor!)}`);
  assert.deepEqual(third, { chats: [], nextCursor: null });

  for (const bad of ['?cursor=nope', '?limit=0', '?unread=maybe', '?cursor=12']) {
    const res = await daemon.request('GET', `/api/sessions/alice/chats${bad}`);
    assert.equal(res.status, 400, bad);
  }
});
