// Backfill (issue 30) on the sandbox: POST …/chats/{chatId}/history asks the phone for messages older than the chat's
// oldest stored one; they arrive as an ON_DEMAND history.sync naming the request and are stored in order, without
// duplicates. Bounds: count 1–50, a chat with nothing stored has no anchor (409), a stopped session (409), two
// requests unanswered and ten a minute per session (429), session-limited keys and scopes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

const CONTACT = '+15550771111';
const CHAT = '15550771111@s.whatsapp.net';
let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'alice', '+15550770001');
  await pairedSession(daemon, 'bob', '+15550770002');
});
after(async () => {
  events?.close();
  await daemon?.cleanup();
});

const ask = (session: string, chat: string, body: unknown = {}, key?: string) => daemon.request('POST', `/api/sessions/${session}/chats/${encodeURIComponent(chat)}/history`, body, key);
const chatTexts = async (session: string, chat: string) => {
  const res = await daemon.request('GET', `/api/sessions/${session}/chats/${encodeURIComponent(chat)}/messages?limit=100`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.data.messages as Array<{ text: string }>).map((m) => m.text);
};

test('older messages arrive as an ON_DEMAND history.sync naming the request, stored in order; asking again goes further back', async () => {
  const older = Array.from({ length: 5 }, (_, i) => ({ text: `older ${i + 1}`, ...(i === 2 ? { fromMe: true } : {}) }));
  const seeded = await daemon.request('POST', '/api/sandbox/sessions/alice/history/older', { chatId: CONTACT, messages: older });
  assert.equal(seeded.status, 200, JSON.stringify(seeded.body));

  // nothing stored of the chat yet: nothing to ask from
  const none = await ask('alice', CONTACT);
  assert.equal(none.status, 409);
  assert.equal(none.body.error.code, 'NO_HISTORY_ANCHOR');

  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from: CONTACT, type: 'text', text: 'hello now' })).status, 200);
  await waitFor(async () => ((await chatTexts('alice', CONTACT)).length === 1 ? true : undefined));

  const asked = await ask('alice', CONTACT, { count: 3 });
  assert.equal(asked.status, 202, JSON.stringify(asked.body));
  const { requestId } = asked.body.data;
  assert.equal(asked.body.data.chatId, CHAT);
  assert.equal(asked.body.data.count, 3);
  const sync = await events.next((e) => e.session === 'alice' && e.event === 'history.sync' && e.payload.requestId === requestId, 5000, 'the answer');
  assert.deepEqual(
    { syncType: sync.payload.syncType, chatId: sync.payload.chatId, progress: sync.payload.progress, messageCount: sync.payload.messageCount },
    { syncType: 'ON_DEMAND', chatId: CHAT, progress: 100, messageCount: 3 },
  );
  assert.equal(sync.payload.messages, undefined, 'the event carries a summary, not the messages');
  await waitFor(async () => ((await chatTexts('alice', CONTACT)).length === 4 ? true : undefined));
  assert.deepEqual(await chatTexts('alice', CONTACT), ['older 3', 'older 4', 'older 5', 'hello now']);
  // older history is no news: the chat still counts only the live message unread, and it is still the last one
  const listed = (await daemon.request('GET', `/api/sessions/alice/chats/${CONTACT}`)).body.data;
  assert.equal(listed.unreadCount, 1);
  assert.equal(listed.lastMessage.text, 'hello now');
  const page = await daemon.request('GET', `/api/sessions/alice/chats/${CONTACT}/messages?limit=1`);
  assert.equal(page.body.data.messages[0].text, 'hello now');
  const all = (await daemon.request('GET', `/api/sessions/alice/chats/${CONTACT}/messages`)).body.data.messages as Array<{ messageId: string; text: string; fromMe: boolean }>;
  assert.equal(all.find((m) => m.text === 'older 3')!.fromMe, true);

  // the next request starts from the new oldest: the two left
  const again = await daemon.request('POST', `/api/sessions/alice/chats/${CONTACT}/history`);
  assert.equal(again.status, 202, 'no body: the default count');
  assert.equal(again.body.data.count, 50);
  assert.equal(again.body.data.before.messageId, all[0]!.messageId, 'asked from the oldest stored');
  await events.next((e) => e.event === 'history.sync' && e.payload.requestId === again.body.data.requestId, 5000, 'the second answer');
  await waitFor(async () => ((await chatTexts('alice', CONTACT)).length === 6 ? true : undefined));
  assert.deepEqual(await chatTexts('alice', CONTACT), ['older 1', 'older 2', 'older 3', 'older 4', 'older 5', 'hello now']);

  // nothing older is left: an empty answer, and nothing stored twice (the phone's copies of stored ones are skipped)
  const last = await ask('alice', CONTACT);
  const empty = await events.next((e) => e.event === 'history.sync' && e.payload.requestId === last.body.data.requestId, 5000, 'the empty answer');
  assert.equal(empty.payload.messageCount, 0);
  assert.equal((await chatTexts('alice', CONTACT)).length, 6);
});

test('the same older messages served twice are stored once', async () => {
  const chat = '+15550771112';
  const messages = [{ id: '3EB0DEDUP000000000001', text: 'dup 1', timestamp: '2026-01-01T00:00:00.000Z' }, { id: '3EB0DEDUP000000000002', text: 'dup 2', timestamp: '2026-01-01T00:01:00.000Z' }];
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/bob/history/older', { chatId: chat, messages })).status, 200);
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/bob/inbound', { from: chat, type: 'text', text: 'now' })).status, 200);
  await waitFor(async () => ((await chatTexts('bob', chat)).length === 1 ? true : undefined));
  const first = await ask('bob', chat);
  await events.next((e) => e.event === 'history.sync' && e.payload.requestId === first.body.data.requestId, 5000, 'first');
  await waitFor(async () => ((await chatTexts('bob', chat)).length === 3 ? true : undefined));
  // the phone serves a message the gateway already stores again (same id, under an older time): skipped, not stored twice
  const again = [{ id: '3EB0DEDUP000000000001', text: 'dup 1 again', timestamp: '2025-12-31T23:58:00.000Z' }, { id: '3EB0DEDUP000000000000', text: 'dup 0', timestamp: '2025-12-31T23:59:00.000Z' }];
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/bob/history/older', { chatId: chat, messages: again })).status, 200);
  const second = await ask('bob', chat);
  const answer = await events.next((e) => e.event === 'history.sync' && e.payload.requestId === second.body.data.requestId, 5000, 'second');
  assert.equal(answer.payload.messageCount, 2, 'both were sent');
  await waitFor(async () => ((await chatTexts('bob', chat)).length === 4 ? true : undefined));
  assert.deepEqual(await chatTexts('bob', chat), ['dup 0', 'dup 1', 'dup 2', 'now']);
});

test('bounds: count 1–50, unknown session 404, stopped session 409, ten requests a minute per session (429 + Retry-After)', async () => {
  for (const count of [0, 51, 'x', 1.5]) assert.equal((await ask('alice', CONTACT, { count })).status, 400, `count ${count}`);
  assert.equal((await ask('alice', CONTACT, { extra: 1 })).status, 400);
  assert.equal((await ask('nobody', CONTACT)).status, 404);
  assert.equal((await ask('alice', 'not a chat!')).status, 400);

  await pairedSession(daemon, 'carol', '+15550770003');
  const chat = '+15550771113';
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/carol/inbound', { from: chat, type: 'text', text: 'hi' })).status, 200);
  await waitFor(async () => ((await chatTexts('carol', chat)).length === 1 ? true : undefined));
  const statuses: number[] = [];
  let limited: Awaited<ReturnType<typeof ask>> | undefined;
  for (let i = 0; i < 12; i++) {
    const res = await ask('carol', chat, { count: 1 });
    statuses.push(res.status);
    if (res.status === 202) await events.next((e) => e.event === 'history.sync' && e.payload.requestId === res.body.data.requestId, 5000, `answer ${i}`);
    else limited ??= res;
  }
  assert.deepEqual(statuses, [...Array(10).fill(202), 429, 429]);
  assert.equal(limited!.body.error.code, 'RATE_LIMITED');
  assert.ok(Number(limited!.headers.get('retry-after')) >= 1);
  // another session is not held back by carol's
  assert.equal((await ask('bob', '+15550771112', { count: 1 })).status, 202);

  assert.equal((await daemon.request('POST', '/api/sessions/carol/stop')).status, 200);
  const stopped = await ask('carol', chat);
  assert.equal(stopped.status, 409);
  assert.equal(stopped.body.error.code, 'SESSION_NOT_CONNECTED');
});

test('access: chats:manage is needed, and a key limited to one session cannot ask for another', async () => {
  const key = async (name: string, scopes: string[], sessions?: string[]) => {
    const res = await daemon.request('POST', '/api/account/keys', { name, scopes, ...(sessions ? { sessions } : {}) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.key as string;
  };
  const reader = await key('reader', ['sessions:read']);
  assert.equal((await ask('alice', CONTACT, {}, reader)).status, 403);
  const bobOnly = await key('bob-only', ['chats:manage'], ['bob']);
  const refused = await ask('alice', CONTACT, {}, bobOnly);
  assert.equal(refused.status, 403);
  assert.equal((await ask('bob', '+15550771112', { count: 1 }, bobOnly)).status, 202);
});
