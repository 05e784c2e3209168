// A chat's history and search (issue 30): pages before and after a point (a cursor, a time, a message), one message by
// id, and full-text search with snippets, kept current when a message is edited or revoked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
const ids: string[] = [];
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'alice', '+15550760001');
  for (let i = 1; i <= 7; i++) {
    const sent = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: '+15550761111', type: 'text', text: `note ${i} about ${i % 2 ? 'apples' : 'Pears'}` });
    assert.equal(sent.status, 200);
    ids.push(sent.body.data.messageId);
    await new Promise((done) => setTimeout(done, 3));
  }
  await daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from: '+15550762222', type: 'text', text: 'Café au lait with apples' });
});
after(() => daemon?.cleanup());

const history = async (query: string) => {
  const res = await daemon.request('GET', `/api/sessions/alice/chats/+15550761111/messages${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as { messages: any[]; nextBefore: string | null; nextAfter: string | null };
};

test('pages of a chat: the newest, then older ones before a cursor, newer ones after a message or a time', async () => {
  const newest = await history('?limit=3');
  assert.deepEqual(newest.messages.map((m) => m.messageId), ids.slice(4));
  const older = await history(`?limit=3&before=${encodeURIComponent(newest.nextBefore!)}`);
  assert.deepEqual(older.messages.map((m) => m.messageId), ids.slice(1, 4));
  const oldest = await history(`?limit=3&before=${encodeURIComponent(older.nextBefore!)}`);
  assert.deepEqual(oldest.messages.map((m) => m.messageId), ids.slice(0, 1));
  assert.equal(oldest.nextBefore, null, 'nothing older');
  const afterMessage = await history(`?limit=2&after=${ids[2]}`);
  assert.deepEqual(afterMessage.messages.map((m) => m.messageId), ids.slice(3, 5));
  const next = await history(`?limit=10&after=${encodeURIComponent(afterMessage.nextAfter!)}`);
  assert.deepEqual(next.messages.map((m) => m.messageId), ids.slice(5));
  const fromTime = await history(`?after=${encodeURIComponent(newest.messages[0].timestamp)}`);
  assert.equal(fromTime.messages[0].messageId, ids[4]);

  const one = await daemon.request('GET', `/api/sessions/alice/messages/${ids[0]}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.data.text, 'note 1 about apples');
  assert.equal((await daemon.request('GET', '/api/sessions/alice/messages/NOPE123')).status, 404);
  assert.equal((await daemon.request('GET', `/api/sessions/alice/chats/+15550761111/messages?after=NOPE123`)).status, 404);
  assert.equal((await daemon.request('GET', `/api/sessions/alice/chats/+15550761111/messages?after=${ids[0]}&before=${ids[1]}`)).status, 400);
  assert.equal((await daemon.request('GET', `/api/sessions/alice/chats/+15550761111/messages?after=2026-13-45T00:00:00Z`)).status, 400);
});

test('search finds every word (a word* as a prefix), newest first, in one chat or all, with a snippet; edits and revokes follow', async () => {
  const search = async (query: string) => {
    const res = await daemon.request('GET', `/api/sessions/alice/messages/search?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.results as Array<{ message: any; snippet: string }>;
  };
  const apples = await waitFor(async () => {
    const found = await search('q=apples');
    return found.length === 5 ? found : undefined;
  });
  assert.equal(apples[0]!.message.text, 'Café au lait with apples', 'newest first');
  assert.deepEqual(apples.slice(1).map((r) => r.message.messageId), [ids[6], ids[4], ids[2], ids[0]]);
  assert.deepEqual((await search('q=cafe')).map((r) => r.message.text), ['Café au lait with apples'], 'diacritics do not matter');
  assert.deepEqual((await search('q=pea*')).length, 3, 'a prefix, whatever the case');
  assert.deepEqual((await search('q=pea')).length, 0, 'a word is a whole word');
  assert.deepEqual((await search('q=note%203%20apples')).map((r) => r.message.messageId), [ids[2]]);
  assert.equal((await search('q=apples&chatId=%2B15550761111')).length, 4);
  assert.equal((await search('q=apples&limit=2')).length, 2);
  assert.match((await search('q=lait'))[0]!.snippet, /lait/);
  for (const odd of ['q=%22', 'q=AND', 'q=*', 'q=NEAR(a%20b)', "q=')%3B%20DROP"]) {
    const res = await daemon.request('GET', `/api/sessions/alice/messages/search?${odd}`);
    assert.ok(res.status === 200 || res.status === 400, `${odd}: ${res.status}`);
  }

  assert.equal((await daemon.request('POST', `/api/sessions/alice/messages/${ids[0]}/edit`, { text: 'note 1 about bananas' })).status, 200);
  assert.equal((await daemon.request('DELETE', `/api/sessions/alice/messages/${ids[2]}`, {})).status, 200);
  await waitFor(async () => ((await search('q=bananas')).length === 1 && (await search('q=apples')).length === 3 ? true : undefined));
});

test('one message with what happened to it: acks with their times, reactions (the newest per person), poll votes, every edit, its media record', async () => {
  const contact = '+15550763333';
  const contactJid = '15550763333@s.whatsapp.net';
  const sendTo = async (fields: Record<string, unknown>) => {
    const res = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: contact, ...fields });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.messageId as string;
  };
  const inbound = async (fields: Record<string, unknown>) => {
    const res = await daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from: contact, ...fields });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const detail = async (id: string) => {
    const res = await daemon.request('GET', `/api/sessions/alice/messages/${id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data;
  };

  const text = await sendTo({ type: 'text', text: 'first words' });
  await inbound({ type: 'read', messageId: text });
  await inbound({ type: 'reaction', messageId: text, reaction: '👍' });
  await inbound({ type: 'reaction', messageId: text, reaction: '❤️' });
  assert.equal((await daemon.request('POST', `/api/sessions/alice/messages/${text}/edit`, { text: 'second words' })).status, 200);
  assert.equal((await daemon.request('POST', `/api/sessions/alice/messages/${text}/edit`, { text: 'third words' })).status, 200);
  const seen = await waitFor(async () => {
    const view = await detail(text);
    return view.acks.some((a: any) => a.status === 'read') && view.reactions[0]?.emoji === '❤️' && view.edits.length === 2 ? view : undefined;
  }, 10_000, 'the read ack, the newest reaction and both edits');
  assert.equal(seen.text, 'third words');
  assert.equal(seen.acks[0].status, 'sent', 'sent at its own time, first');
  assert.deepEqual(seen.acks.filter((a: any) => a.status === 'read').map((a: any) => a.by), [contactJid], 'read once, by the contact');
  for (const ack of seen.acks) assert.ok(Date.parse(ack.at) >= Date.parse(seen.timestamp) - 1000, `${ack.status} at ${ack.at}`);
  assert.deepEqual(seen.reactions.map((r: any) => [r.from, r.emoji]), [[contactJid, '❤️']], 'one reaction per person: the newest');
  assert.deepEqual(seen.edits.map((e: any) => e.text), ['second words', 'third words']);
  assert.equal(seen.media, null);

  await inbound({ type: 'reaction', messageId: text, reaction: '' });
  await waitFor(async () => ((await detail(text)).reactions.length === 0 ? true : undefined), 10_000, 'the reaction removed');

  const poll = await sendTo({ type: 'poll', pollTitle: 'Lunch?', pollOptions: ['soup', 'salad'] });
  await inbound({ type: 'vote', messageId: poll, options: ['soup'] });
  await inbound({ type: 'vote', messageId: poll, options: ['salad'] });
  const voted = await waitFor(async () => {
    const view = await detail(poll);
    return view.votes[0]?.selectedOptions[0] === 'salad' ? view : undefined;
  }, 10_000, 'the newest vote');
  assert.deepEqual(voted.poll, { title: 'Lunch?', options: ['soup', 'salad'], multiSelect: false });
  assert.deepEqual(voted.votes.map((v: any) => v.voter), [contactJid]);

  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
  const image = await sendTo({ type: 'image', base64: png.toString('base64'), caption: 'a dot' });
  const withMedia = await detail(image);
  assert.equal(withMedia.media.id, withMedia.mediaId);
  assert.equal(withMedia.media.mimeType, 'image/png');

  // the history page carries the same detail
  const page = (await daemon.request('GET', `/api/sessions/alice/chats/${encodeURIComponent(contact)}/messages?limit=10`)).body.data;
  const fromPage = page.messages.find((m: any) => m.messageId === text);
  assert.deepEqual(fromPage.edits.map((e: any) => e.text), ['second words', 'third words']);
  assert.equal(page.messages.find((m: any) => m.messageId === image).media.mimeType, 'image/png');
});

test('a refused send: stored failed with its failure and history, and a later receipt still moves it on', async () => {
  const contact = '+15550764444';
  const armed = await daemon.request('POST', '/api/sandbox/sessions/alice/faults/nack', { code: '479', chatId: contact });
  assert.equal(armed.status, 200, JSON.stringify(armed.body));
  const refused = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: contact, type: 'text', text: 'stale devices' });
  assert.equal(refused.status, 422, JSON.stringify(refused.body));
  const details = refused.body.error.details as Array<{ path: string; message: string }>;
  assert.deepEqual(details.filter((d) => d.path !== '/messageId'), [{ path: '/reason', message: 'recipient_unreachable' }, { path: '/code', message: '479' }]);
  const id = details.find((d) => d.path === '/messageId')!.message;
  const failed = (await daemon.request('GET', `/api/sessions/alice/messages/${id}`)).body.data;
  assert.equal(failed.status, 'failed');
  assert.equal(failed.text, 'stale devices');
  assert.deepEqual({ reason: failed.failure.reason, code: failed.failure.code }, { reason: 'recipient_unreachable', code: '479' });
  assert.deepEqual(failed.statusHistory.map((h: any) => [h.status, h.reason]), [['pending', undefined], ['failed', 'recipient_unreachable']]);
  assert.deepEqual(failed.acks, []);
  // the next send to that chat goes through: the fault was for one message
  const next = await daemon.request('POST', '/api/sessions/alice/messages/send', { chatId: contact, type: 'text', text: 'fine now' });
  assert.equal(next.status, 200);
  assert.equal(next.body.data.status, 'sent');

  // the contact reads it after all: the truth wins over the failure, which stays in its history
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/alice/inbound', { from: contact, type: 'read', messageId: id })).status, 200);
  const read = await waitFor(async () => {
    const view = (await daemon.request('GET', `/api/sessions/alice/messages/${id}`)).body.data;
    return view.status === 'read' ? view : undefined;
  }, 10_000, 'the refused message read');
  assert.equal(read.failure.reason, 'recipient_unreachable');
  assert.deepEqual(read.statusHistory.map((h: any) => h.status), ['pending', 'failed', 'read']);
});
