// Chat actions (issue 30): POST …/chats/{chatId}/archive|unarchive|pin|unpin|mute|unmute|read|unread change the chat on
// the network, show in the chat list at once and come back as chat.* events; refused clearly when they cannot apply.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

let daemon: TestDaemon;
let events: EventCollector;
const BOB = '15550761111';
const BOB_JID = `${BOB}@s.whatsapp.net`;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'alice', '+15550760001');
  await pairedSession(daemon, 'other', '+15550760002');
  for (const [from, text] of [[BOB, 'one'], [BOB, 'two'], ['15550762222', 'hi'], ['15550763333', 'hi'], ['15550764444', 'hi'], ['15550765555', 'hi']]) {
    const res = await daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from: `+${from}`, type: 'text', text });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  await waitFor(async () => (await daemon.request('GET', '/api/sessions/alice/chats')).body.data.chats.length === 5, 5000, 'five chats');
});
after(async () => {
  events?.close();
  await daemon?.cleanup();
});

const act = (action: string, body?: unknown, chat = BOB, key?: string) => daemon.request('POST', `/api/sessions/alice/chats/${encodeURIComponent(chat)}/${action}`, body, key);
const chat = async (id = BOB_JID) => (await daemon.request('GET', `/api/sessions/alice/chats/${id}`)).body.data;
const ok = async (action: string, body?: unknown, id = BOB) => {
  const res = await act(action, body, id);
  assert.equal(res.status, 200, `${action}: ${JSON.stringify(res.body)}`);
  return res.body.data;
};
const nextEvent = (type: string, match: (p: any) => boolean) => events.next((e) => e.session === 'alice' && e.event === type && match(e.payload), 5000, type);

test('archive and unarchive: the answer, the list and a chat.archive event show it', async () => {
  const archived = await ok('archive');
  assert.equal(archived.chatId, BOB_JID);
  assert.equal(archived.archived, true);
  await nextEvent('chat.archive', (p) => p.chatId === BOB_JID && p.archived === true);
  assert.deepEqual(await chat(), archived);
  const list = (await daemon.request('GET', '/api/sessions/alice/chats?archived=true')).body.data.chats;
  assert.deepEqual(list.map((c: any) => c.chatId), [BOB_JID]);
  assert.equal((await ok('unarchive')).archived, false);
  await nextEvent('chat.archive', (p) => p.chatId === BOB_JID && p.archived === false);
  assert.equal((await chat()).archived, false);
});

test('pin and unpin (chat.pin); at most three chats pinned', async () => {
  assert.equal((await ok('pin')).pinned, true);
  await nextEvent('chat.pin', (p) => p.chatId === BOB_JID && p.pinned === true);
  assert.equal((await ok('pin')).pinned, true, 'pinning a pinned chat again is fine');
  await ok('pin', undefined, '+15550762222');
  await ok('pin', undefined, '+15550763333');
  const fourth = await act('pin', undefined, '+15550764444');
  assert.equal(fourth.status, 409);
  assert.equal(fourth.body.error.code, 'LIMIT_REACHED');
  assert.equal((await chat('15550764444@s.whatsapp.net')).pinned, false);
  assert.equal((await ok('unpin')).pinned, false);
  await nextEvent('chat.pin', (p) => p.chatId === BOB_JID && p.pinned === false);
  assert.equal((await ok('pin', undefined, '+15550764444')).pinned, true, 'a slot is free again');
});

test('mute: 8 hours by default, for a duration, until a time, for good; unmute', async () => {
  const before = Date.now();
  const muted = await ok('mute');
  assert.equal(muted.muted, true);
  const end = Date.parse(muted.muteEndTime);
  assert.ok(end >= before + 8 * 3600_000 && end <= Date.now() + 8 * 3600_000, muted.muteEndTime);
  await nextEvent('chat.mute', (p) => p.chatId === BOB_JID && p.muted === true && p.muteEndTime === muted.muteEndTime);

  const hour = Date.parse((await ok('mute', { duration: 3600 })).muteEndTime) - Date.now();
  assert.ok(hour > 3590_000 && hour <= 3600_000, String(hour));
  assert.equal((await ok('mute', { until: '2099-01-01T00:00:00Z' })).muteEndTime, '2099-01-01T00:00:00.000Z');
  const forever = await ok('mute', { forever: true });
  assert.deepEqual([forever.muted, forever.muteEndTime], [true, null]);
  await nextEvent('chat.mute', (p) => p.chatId === BOB_JID && p.muted === true && p.muteEndTime === null);

  const unmuted = await ok('unmute');
  assert.deepEqual([unmuted.muted, unmuted.muteEndTime], [false, null]);
  await nextEvent('chat.mute', (p) => p.chatId === BOB_JID && p.muted === false);
  assert.equal((await chat()).muted, false);

  for (const bad of [{ duration: 10 }, { duration: 3600, forever: true }, { until: '2001-01-01T00:00:00Z' }, { until: 'tomorrow' }, { forever: 'yes' }, { other: 1 }]) {
    const res = await act('mute', bad);
    assert.equal(res.status, 400, JSON.stringify(bad));
    assert.equal(res.body.error.code, 'VALIDATION_FAILED');
  }
  assert.equal((await chat()).muted, false, 'a refused mute changed nothing');
});

test('read and unread move the unread count', async () => {
  assert.equal((await chat()).unreadCount, 2);
  const read = await ok('read');
  assert.equal(read.unreadCount, 0);
  await nextEvent('chat.read', (p) => p.chatId === BOB_JID && p.read === true);
  const unread = await ok('unread');
  assert.equal(unread.unreadCount, 1);
  await nextEvent('chat.read', (p) => p.chatId === BOB_JID && p.read === false);
  assert.deepEqual((await daemon.request('GET', '/api/sessions/alice/chats?unread=true')).body.data.chats.some((c: any) => c.chatId === BOB_JID), true);
  assert.equal((await ok('read')).unreadCount, 0);
  // a new message after the read counts again
  await daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from: `+${BOB}`, type: 'text', text: 'three' });
  await waitFor(async () => ((await chat()).unreadCount === 1 ? true : undefined), 5000, 'one unread');
});

test('refusals: not a chat, an unknown chat, a bad body, a stopped session, keys', async () => {
  for (const [id, code, status] of [
    ['not-a-jid', 'VALIDATION_FAILED', 400],
    ['status@broadcast', 'VALIDATION_FAILED', 400],
    ['120363000000000001@newsletter', 'VALIDATION_FAILED', 400],
    ['+15550769999', 'CHAT_NOT_FOUND', 404],
  ] as const) {
    const res = await act('archive', undefined, id);
    assert.equal(res.status, status, `${id}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, code, id);
  }
  assert.equal((await daemon.request('GET', '/api/sessions/alice/chats/+15550769999')).body.error.code, 'CHAT_NOT_FOUND');
  assert.equal((await act('archive', { archived: true })).status, 400, 'the actions take no body fields');
  assert.equal((await daemon.request('POST', '/api/sessions/nobody/chats/+15550761111/archive')).status, 404);
  assert.equal((await daemon.request('POST', '/api/sessions/alice/chats/+15550761111/star')).status, 404, 'no such action');

  const key = async (scopes: string[], sessions?: string[]) => {
    const res = await daemon.request('POST', '/api/admin/keys', { name: `k${Math.random()}`, scopes, ...(sessions ? { sessions } : {}) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.key as string;
  };
  const reader = await key(['sessions:read']);
  assert.equal((await act('archive', undefined, BOB, reader)).status, 403, 'reading keys cannot act');
  const otherSession = await key(['chats:manage'], ['other']);
  const refused = await act('archive', undefined, BOB, otherSession);
  assert.equal(refused.status, 403, 'a key limited to another session');
  assert.equal((await chat()).archived, false);
  const mine = await key(['chats:manage'], ['alice']);
  assert.equal((await act('archive', undefined, BOB, mine)).body.data.archived, true);
  assert.equal((await act('unarchive', undefined, BOB, mine)).status, 200);

  assert.equal((await daemon.request('POST', '/api/sessions/alice/stop')).status, 200);
  const stopped = await act('archive');
  assert.equal(stopped.status, 409);
  assert.equal(stopped.body.error.code, 'SESSION_NOT_CONNECTED');
  assert.equal((await chat()).archived, false);
});
