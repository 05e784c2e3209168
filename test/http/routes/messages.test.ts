import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15550100001';
const B = '+15550100002';
const B_JID = '15550100002@s.whatsapp.net';
const A_JID = '15550100001@s.whatsapp.net';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(16)]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(16)]);
const OGG = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(28)]);
const VCARD = 'BEGIN:VCARD\nVERSION:3.0\nFN:Jane Doe\nTEL;type=CELL;waid=15550100009:+15550100009\nEND:VCARD';

let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A, { pushName: 'Alice' });
  await pairedSession(daemon, 'b', B, { pushName: 'Bob' });
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, ...body }, undefined, headers);

async function sendAndReceive(body: Record<string, unknown>) {
  const res = await send(body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const id = res.body.data.messageId;
  const received = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === id, 5000, `b receives ${id}`);
  return { res, received: received.payload, id };
}

describe('sending each type from A to B', () => {
  test('text: result fields, formatting kept, received with sender JIDRef, message.sent on A', async () => {
    const { res, received, id } = await sendAndReceive({ type: 'text', text: '*bold* _it_ ~strike~ ```mono```' });
    const data = res.body.data;
    assert.match(id, /^3EB0[0-9A-F]{20}$/);
    assert.equal(data.status, 'sent');
    assert.equal(data.chatId, B_JID);
    assert.equal(data.phoneNumber, B);
    assert.match(data.lid, /^\d+@lid$/);
    assert.ok(Date.parse(data.timestamp));
    assert.equal(data.mediaId, undefined);
    assert.equal(received.type, 'text');
    assert.equal(received.text, '*bold* _it_ ~strike~ ```mono```');
    assert.equal(received.chatId, A_JID);
    assert.equal(received.fromMe, false);
    assert.equal(received.isGroup, false);
    assert.deepEqual(Object.keys(received.from).sort(), ['jid', 'lid', 'phoneNumber']);
    assert.equal(received.from.phoneNumber, A);
    const sent = await events.next((e) => e.session === 'a' && e.event === 'message.sent' && e.payload.messageId === id);
    assert.equal(sent.payload.fromMe, true);
    assert.equal(sent.payload.status, 'sent');
  });

  test('acks reach A: delivered at once, read when B marks the message seen', async () => {
    const { id } = await sendAndReceive({ type: 'text', text: 'please read' });
    const delivered = await events.next((e) => e.session === 'a' && e.event === 'message.ack' && e.payload.messageId === id && e.payload.status === 'delivered');
    assert.equal(delivered.payload.by.phoneNumber, B);
    const seen = await daemon.request('POST', '/api/sessions/b/messages/seen', { chatId: A, messageId: id });
    assert.equal(seen.status, 200);
    const read = await events.next((e) => e.session === 'a' && e.event === 'message.ack' && e.payload.messageId === id && e.payload.status === 'read');
    assert.equal(read.payload.chatId, B_JID);
  });

  test('image by base64 (raw and data: URI): mediaId on both sides, caption kept', async () => {
    const { res, received } = await sendAndReceive({ type: 'image', base64: PNG.toString('base64'), caption: 'a pixel' });
    assert.match(res.body.data.mediaId, /^[0-9a-f-]{36}$/);
    assert.equal(received.caption, 'a pixel');
    assert.equal(received.mimeType, 'image/png');
    assert.equal(received.size, PNG.length);
    assert.match(received.mediaId, /^[0-9a-f-]{36}$/);
    assert.notEqual(received.mediaId, res.body.data.mediaId);
    assert.equal(received.media, undefined);
    const uri = await sendAndReceive({ type: 'image', base64: `data:image/png;base64,${PNG.toString('base64')}` });
    assert.equal(uri.received.mimeType, 'image/png');
  });

  test('video, voice (ptt), file (document alias), sticker', async () => {
    const video = await sendAndReceive({ type: 'video', base64: MP4.toString('base64'), caption: 'clip' });
    assert.equal(video.received.type, 'video');
    assert.equal(video.received.mimeType, 'video/mp4');
    const voice = await sendAndReceive({ type: 'voice', base64: OGG.toString('base64'), ptt: true });
    assert.equal(voice.received.type, 'voice');
    assert.equal(voice.received.ptt, true);
    assert.match(voice.received.mimeType, /^audio\/ogg/);
    const audio = await sendAndReceive({ type: 'audio', base64: OGG.toString('base64') });
    assert.equal(audio.received.type, 'voice');
    const file = await sendAndReceive({ type: 'document', base64: Buffer.from('hello file').toString('base64'), filename: 'notes.txt', mimeType: 'text/plain', caption: 'notes' });
    assert.equal(file.received.type, 'file');
    assert.equal(file.received.filename, 'notes.txt');
    assert.equal(file.received.mimeType, 'text/plain');
    const sticker = await sendAndReceive({ type: 'sticker', base64: WEBP.toString('base64') });
    assert.equal(sticker.received.type, 'sticker');
    assert.equal(sticker.received.mimeType, 'image/webp');
  });

  test('poll, location, contact', async () => {
    const poll = await sendAndReceive({ type: 'poll', pollTitle: 'Lunch?', pollOptions: ['Pizza', 'Sushi'], pollMultiSelect: true });
    assert.deepEqual(poll.received.poll, { title: 'Lunch?', options: ['Pizza', 'Sushi'], multiSelect: true });
    const location = await sendAndReceive({ type: 'location', latitude: -23.55, longitude: -46.63, address: 'Av. Paulista' });
    assert.deepEqual(location.received.location, { latitude: -23.55, longitude: -46.63, address: 'Av. Paulista' });
    const contact = await sendAndReceive({ type: 'contact', vcard: VCARD });
    assert.equal(contact.received.vcard, VCARD);
    assert.equal(contact.received.displayName, 'Jane Doe');
  });

  test('quotedMessage, mentions and isForwarded arrive with the message', async () => {
    const first = await sendAndReceive({ type: 'text', text: 'original' });
    const reply = await sendAndReceive({
      type: 'text',
      text: 'replying to @15550100002',
      quotedMessage: { messageId: first.id },
      mentions: [B],
      isForwarded: true,
    });
    assert.equal(reply.received.quotedMessageId, first.id);
    assert.deepEqual(reply.received.mentions, [B_JID]);
    assert.equal(reply.received.isForwarded, true);
    const missing = await send({ type: 'text', text: 'x', quotedMessage: { messageId: 'NOPE' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'MESSAGE_NOT_FOUND');
  });

  test('addressing: bare phone number, c.us JID, LID JID and status@broadcast', async () => {
    const byCus = await sendAndReceive({ chatId: '15550100002@c.us', type: 'text', text: 'c.us' });
    assert.equal(byCus.res.body.data.chatId, B_JID);
    const session = (await daemon.request('GET', '/api/sessions/b')).body.data;
    const byLid = await sendAndReceive({ chatId: session.lid, type: 'text', text: 'by lid' });
    // one chat per person: a LID whose number is known is the number's chat, at the sender and at the recipient
    assert.equal(byLid.res.body.data.chatId, B_JID);
    assert.equal(byLid.res.body.data.lid, session.lid);
    assert.equal(byLid.received.chatId, byCus.received.chatId);
    assert.match(byLid.received.chatId, /@s\.whatsapp\.net$/);
    const status = await send({ chatId: 'status@broadcast', type: 'text', text: 'my status', statusViewers: [B] });
    assert.equal(status.status, 200);
    assert.equal(status.body.data.chatId, 'status@broadcast');
    const seen = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === status.body.data.messageId, 5000, 'status at b');
    assert.equal(seen.payload.chatId, 'status@broadcast');
  });

  test('a virtual contact receives, and acks delivered then read', async () => {
    const res = await send({ chatId: '+15550100777', type: 'text', text: 'to a virtual contact' });
    const id = res.body.data.messageId;
    await events.next((e) => e.session === 'a' && e.event === 'message.ack' && e.payload.messageId === id && e.payload.status === 'read', 3000, 'read ack');
  });
});

describe('posting to a channel', () => {
  test('the owner\'s post reaches followers from the channel; others are refused; unknown channels are 404', async () => {
    await pairedSession(daemon, 'outsider', '+15550100006');
    const created = await daemon.request('POST', '/api/sessions/a/channels', { session: 'a', name: 'Alice news' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const channelId: string = created.body.data.lid;
    const follow = await daemon.request('POST', `/api/sessions/b/channels/${encodeURIComponent(channelId)}/follow`, {});
    assert.equal(follow.status, 200, JSON.stringify(follow.body));

    const { res, received, id } = await sendAndReceive({ chatId: channelId, type: 'text', text: 'first post' });
    assert.equal(res.body.data.chatId, channelId);
    assert.equal(received.chatId, channelId);
    assert.equal(received.type, 'text');
    assert.equal(received.text, 'first post');
    assert.equal(received.fromMe, false);
    assert.equal(received.from.jid, channelId);
    // the same post as media, with a mediaId on the follower's side
    const image = await sendAndReceive({ chatId: channelId, type: 'image', base64: PNG.toString('base64'), caption: 'a pixel post' });
    assert.equal(image.received.chatId, channelId);
    assert.match(image.received.mediaId, /^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 200));
    // followers only: neither the owner nor the outsider receives the post
    assert.deepEqual(events.all((e) => e.event === 'message.received' && e.payload.messageId === id).map((e) => e.session), ['b']);

    const byFollower = await daemon.request('POST', '/api/messages/send', { session: 'b', chatId: channelId, type: 'text', text: 'hijack' });
    assert.equal(byFollower.status, 403, JSON.stringify(byFollower.body));
    assert.equal(byFollower.body.error.code, 'NOT_CHANNEL_OWNER');
    const byOutsider = await daemon.request('POST', '/api/messages/send', { session: 'outsider', chatId: channelId, type: 'text', text: 'hijack' });
    assert.equal(byOutsider.status, 403);
    assert.equal(byOutsider.body.error.code, 'NOT_CHANNEL_OWNER');

    const unknown = await send({ chatId: '120363000000000001@newsletter', type: 'text', text: 'into the void' });
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    assert.equal(unknown.body.error.code, 'CHANNEL_NOT_FOUND');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(events.all((e) => e.event === 'message.received' && ['hijack', 'into the void'].includes(e.payload.text)).length, 0);
  });
});

describe('async sends', () => {
  test('202 at once with Preference-Applied, then exactly one command.result', async () => {
    const res = await send({ type: 'text', text: 'async hello' }, { Prefer: 'respond-async' });
    assert.equal(res.status, 202);
    assert.equal(res.headers.get('preference-applied'), 'respond-async');
    assert.equal(res.body.data.status, 'accepted');
    const { commandId } = res.body.data;
    const result = await events.next((e) => e.event === 'command.result' && e.payload.commandId === commandId);
    assert.equal(result.payload.success, true);
    assert.match(result.payload.result.messageId, /^3EB0/);
    await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === result.payload.result.messageId);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(events.all((e) => e.event === 'command.result' && e.payload.commandId === commandId).length, 1);
  });

  test('bad input is refused before 202; a failure later is a command.result with the error', async () => {
    const bad = await send({ type: 'poll', pollTitle: 'x', pollOptions: ['one'] }, { Prefer: 'respond-async' });
    assert.equal(bad.status, 400);
    const failing = await send({ chatId: '+15550100002', type: 'text', text: 'x', quotedMessage: { messageId: 'UNKNOWN' } }, { Prefer: 'respond-async' });
    assert.equal(failing.status, 202);
    const result = await events.next((e) => e.event === 'command.result' && e.payload.commandId === failing.body.data.commandId);
    assert.equal(result.payload.success, false);
    assert.equal(result.payload.error.code, 'MESSAGE_NOT_FOUND');
    assert.equal(result.session, 'a');
    const noChannel = await send({ chatId: '120363000000000002@newsletter', type: 'text', text: 'x' }, { Prefer: 'respond-async' });
    assert.equal(noChannel.status, 202);
    const channelResult = await events.next((e) => e.event === 'command.result' && e.payload.commandId === noChannel.body.data.commandId);
    assert.equal(channelResult.payload.success, false);
    assert.equal(channelResult.payload.error.code, 'CHANNEL_NOT_FOUND');
    // a failure is reported once, not once per attempt or per listener
    await new Promise((r) => setTimeout(r, 500));
    for (const commandId of [failing.body.data.commandId, noChannel.body.data.commandId]) {
      assert.equal(events.all((e) => e.event === 'command.result' && e.payload.commandId === commandId).length, 1, commandId);
    }
  });
});

describe('operations on messages', () => {
  test('edit own text: B gets message.edited; editing B\'s message is 403 NOT_MESSAGE_OWNER', async () => {
    const { id } = await sendAndReceive({ type: 'text', text: 'typo' });
    const edit = await daemon.request('POST', `/api/sessions/a/messages/${id}/edit`, { text: 'fixed' });
    assert.equal(edit.status, 200);
    const edited = await events.next((e) => e.session === 'b' && e.event === 'message.edited' && e.payload.messageId === id);
    assert.equal(edited.payload.text, 'fixed');
    assert.equal(edited.payload.chatId, A_JID);
    const otherEdit = await daemon.request('POST', `/api/sessions/b/messages/${id}/edit`, { text: 'hijack' });
    assert.equal(otherEdit.status, 403);
    assert.equal(otherEdit.body.error.code, 'NOT_MESSAGE_OWNER');
    const poll = await send({ type: 'poll', pollTitle: 'p', pollOptions: ['1', '2'] });
    const pollEdit = await daemon.request('POST', `/api/sessions/a/messages/${poll.body.data.messageId}/edit`, { text: 'x' });
    assert.equal(pollEdit.status, 400);
    const unknown = await daemon.request('POST', '/api/sessions/a/messages/NOPE/edit', { text: 'x' });
    assert.equal(unknown.status, 404);
  });

  test('delete own for everyone: B gets message.revoked; deleting B\'s message is 403', async () => {
    const { id } = await sendAndReceive({ type: 'text', text: 'oops' });
    const other = await daemon.request('DELETE', `/api/sessions/b/messages/${id}`);
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'NOT_MESSAGE_OWNER');
    const del = await daemon.request('DELETE', `/api/sessions/a/messages/${id}`);
    assert.equal(del.status, 200);
    await events.next((e) => e.session === 'b' && e.event === 'message.revoked' && e.payload.messageId === id);
    const again = await daemon.request('DELETE', `/api/sessions/a/messages/${id}`);
    assert.equal(again.status, 404);
  });

  test('react and remove a reaction', async () => {
    const { id } = await sendAndReceive({ type: 'text', text: 'react to me' });
    const react = await daemon.request('POST', '/api/sessions/b/messages/react', { chatId: A, messageId: id, reaction: '👍' });
    assert.equal(react.status, 200);
    const got = await events.next((e) => e.session === 'a' && e.event === 'message.reaction' && e.payload.messageId === id && e.payload.reaction === '👍');
    assert.equal(got.payload.from.phoneNumber, B);
    await daemon.request('POST', '/api/sessions/b/messages/react', { chatId: A, messageId: id, reaction: '' });
    await events.next((e) => e.session === 'a' && e.event === 'message.reaction' && e.payload.messageId === id && e.payload.reaction === '');
  });

  test('typing returns at once and reaches B as presence.update; "typing" is an alias of composing', async () => {
    for (const [state, expected] of [['typing', 'composing'], ['recording', 'composing'], ['paused', 'paused']] as const) {
      const res = await daemon.request('POST', '/api/sessions/a/messages/typing', { chatId: B, state });
      assert.equal(res.status, 200);
      const update = await events.next((e) => e.session === 'b' && e.event === 'presence.update' && e.payload.state === expected && (state !== 'recording' || e.payload.media === 'audio') && Date.parse(e.timestamp) >= Date.now() - 2000);
      assert.equal(update.payload.from.phoneNumber, A);
    }
    const bad = await daemon.request('POST', '/api/sessions/a/messages/typing', { chatId: B, state: 'dancing' });
    assert.equal(bad.status, 400);
  });

  test('star and unstar: message.update events; a message the gateway never saw needs fromMe', async () => {
    const { id } = await sendAndReceive({ type: 'text', text: 'star me' });
    const star = await daemon.request('POST', '/api/sessions/a/messages/star', { chatId: B, messageId: id });
    assert.equal(star.status, 200);
    await events.next((e) => e.session === 'a' && e.event === 'message.update' && e.payload.messageId === id && e.payload.starred === true);
    await daemon.request('POST', '/api/sessions/a/messages/star', { chatId: B, messageId: id, star: false });
    await events.next((e) => e.session === 'a' && e.event === 'message.update' && e.payload.messageId === id && e.payload.starred === false);
    const unknown = await daemon.request('POST', '/api/sessions/a/messages/star', { chatId: B, messageId: 'UNSEEN' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.details[0].path, '/fromMe');
  });

  test('virtual contacts write, react, edit, revoke and vote; the session stores and reports it', async () => {
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'text', text: 'hi there' });
    assert.equal(inbound.status, 200);
    const id = inbound.body.data.messageId;
    const received = await events.next((e) => e.session === 'a' && e.event === 'message.received' && e.payload.messageId === id);
    assert.equal(received.payload.from.phoneNumber, '+15550100888');
    await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'edit', messageId: id, text: 'hi there!' });
    await events.next((e) => e.session === 'a' && e.event === 'message.edited' && e.payload.messageId === id && e.payload.text === 'hi there!');
    const notTheirs = await send({ chatId: '+15550100888', type: 'text', text: 'mine' });
    const forbidden = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'revoke', messageId: notTheirs.body.data.messageId });
    assert.equal(forbidden.status, 403);
    await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'revoke', messageId: id });
    await events.next((e) => e.session === 'a' && e.event === 'message.revoked' && e.payload.messageId === id);
    const poll = await send({ chatId: '+15550100888', type: 'poll', pollTitle: 'When?', pollOptions: ['Now', 'Later'] });
    const vote = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'vote', messageId: poll.body.data.messageId, options: ['Later'] });
    assert.equal(vote.status, 200);
    const voted = await events.next((e) => e.session === 'a' && e.event === 'message.vote' && e.payload.pollMessageId === poll.body.data.messageId);
    assert.deepEqual(voted.payload.selectedOptions, ['Later']);
    assert.equal(voted.payload.voter.phoneNumber, '+15550100888');
    const badVote = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'vote', messageId: poll.body.data.messageId, options: ['Never'] });
    assert.equal(badVote.status, 400);
    await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: '+15550100888', type: 'reaction', messageId: poll.body.data.messageId, reaction: '🎉' });
    await events.next((e) => e.session === 'a' && e.event === 'message.reaction' && e.payload.reaction === '🎉');
  });
});

describe('limits and validation', () => {
  const expect400 = async (body: Record<string, unknown>, path: string) => {
    const res = await send(body);
    assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), `${path} in ${JSON.stringify(res.body.error.details)}`);
  };

  test('poll options: 2 and 12 pass; 1 and 13 fail; repeated options fail', async () => {
    const options = (n: number) => Array.from({ length: n }, (_, i) => `option ${i + 1}`);
    assert.equal((await send({ type: 'poll', pollTitle: 'p', pollOptions: options(2) })).status, 200);
    assert.equal((await send({ type: 'poll', pollTitle: 'p', pollOptions: options(12) })).status, 200);
    await expect400({ type: 'poll', pollTitle: 'p', pollOptions: options(1) }, '/pollOptions');
    await expect400({ type: 'poll', pollTitle: 'p', pollOptions: options(13) }, '/pollOptions');
    await expect400({ type: 'poll', pollTitle: 'p', pollOptions: ['same', 'same'] }, '/pollOptions');
    await expect400({ type: 'poll', pollOptions: options(2) }, '/pollTitle');
  });

  test('poll title 255 characters pass, 256 fail; an option of 100 characters passes, 101 fails', async () => {
    const ok = await sendAndReceive({ type: 'poll', pollTitle: 't'.repeat(255), pollOptions: ['o'.repeat(100), 'short'] });
    assert.equal(ok.received.poll.title, 't'.repeat(255));
    assert.deepEqual(ok.received.poll.options, ['o'.repeat(100), 'short']);
    await expect400({ type: 'poll', pollTitle: 't'.repeat(256), pollOptions: ['a', 'b'] }, '/pollTitle');
    await expect400({ type: 'poll', pollTitle: 'p', pollOptions: ['short', 'o'.repeat(101)] }, '/pollOptions/1');
  });

  test('mentions: 256 pass, 257 fail, and each must appear in the text', async () => {
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => `1555020${String(i).padStart(4, '0')}`);
    const text = (list: string[]) => list.map((n) => `@${n}`).join(' ');
    const ok = numbers(256);
    assert.equal((await send({ type: 'text', text: text(ok), mentions: ok })).status, 200);
    const tooMany = numbers(257);
    await expect400({ type: 'text', text: text(tooMany), mentions: tooMany }, '/mentions');
    await expect400({ type: 'text', text: 'hello @15550100002', mentions: ['15550100003'] }, '/mentions/0');
  });

  test('text 65,536 characters pass, 65,537 fail; caption 1,024 pass, 1,025 fail', async () => {
    assert.equal((await send({ type: 'text', text: 'x'.repeat(65_536) })).status, 200);
    await expect400({ type: 'text', text: 'x'.repeat(65_537) }, '/text');
    assert.equal((await send({ type: 'image', base64: PNG.toString('base64'), caption: 'c'.repeat(1024) })).status, 200);
    await expect400({ type: 'image', base64: PNG.toString('base64'), caption: 'c'.repeat(1025) }, '/caption');
  });

  test('media source: exactly one of url and base64; url must be https; MIME type per message type', async () => {
    await expect400({ type: 'image' }, '/url');
    await expect400({ type: 'image', url: 'https://example.com/a.png', base64: PNG.toString('base64') }, '/base64');
    await expect400({ type: 'image', base64: 'not base64 at all!' }, '/base64');
    await expect400({ type: 'image', base64: OGG.toString('base64') }, '/base64');
    await expect400({ type: 'sticker', base64: PNG.toString('base64') }, '/base64');
    await expect400({ type: 'video', base64: PNG.toString('base64') }, '/base64');
    await expect400({ type: 'voice', base64: MP4.toString('base64') }, '/base64');
    await expect400({ type: 'file', base64: PNG.toString('base64') }, '/filename');
    const fileUrl = await send({ type: 'image', url: 'file:///etc/passwd' });
    assert.equal(fileUrl.status, 400);
    assert.equal(fileUrl.body.error.code, 'MEDIA_URL_REJECTED');
  });

  test('location and contact: coordinates in range, vCard 3.0 required', async () => {
    assert.equal((await send({ type: 'location', latitude: 90, longitude: -180 })).status, 200);
    await expect400({ type: 'location', latitude: 90.0001, longitude: 0 }, '/latitude');
    await expect400({ type: 'location', latitude: 0 }, '/longitude');
    await expect400({ type: 'contact', vcard: 'BEGIN:VCARD\nVERSION:2.1\nFN:Old\nEND:VCARD' }, '/vcard');
    await expect400({ type: 'contact', vcard: 'BEGIN:VCARD\nVERSION:3.0\nEND:VCARD' }, '/vcard');
  });

  test('fields of another type, unknown fields, bad chat ids, unknown types', async () => {
    await expect400({ type: 'text', text: 'x', caption: 'no' }, '/caption');
    await expect400({ type: 'text', text: 'x', colour: 'red' }, '/colour');
    await expect400({ type: 'text', text: 'x', chatId: 'not a jid' }, '/chatId');
    await expect400({ type: 'hologram', text: 'x' }, '/type');
    await expect400({ type: 'text' }, '/text');
  });

  test('sending through a stopped or unpaired session → 409 SESSION_NOT_CONNECTED; unknown session → 404', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'unpaired', start: true });
    const unpaired = await daemon.request('POST', '/api/messages/send', { session: 'unpaired', chatId: B, type: 'text', text: 'x' });
    assert.equal(unpaired.status, 409);
    assert.equal(unpaired.body.error.code, 'SESSION_NOT_CONNECTED');
    const unknown = await daemon.request('POST', '/api/messages/send', { session: 'ghost', chatId: B, type: 'text', text: 'x' });
    assert.equal(unknown.status, 404);
    await pairedSession(daemon, 'c', '+15550100003');
    await daemon.request('POST', '/api/sessions/c/stop');
    for (const [method, path, body] of [
      ['POST', '/api/messages/send', { session: 'c', chatId: B, type: 'text', text: 'x' }],
      ['POST', '/api/sessions/c/messages/react', { chatId: B, messageId: 'X', reaction: '👍' }],
      ['POST', '/api/sessions/c/messages/typing', { chatId: B, state: 'paused' }],
      ['POST', '/api/sessions/c/messages/seen', { chatId: B, messageId: 'X' }],
    ] as const) {
      const res = await daemon.request(method, path, body);
      assert.equal(res.status, 409, path);
      assert.equal(res.body.error.code, 'SESSION_NOT_CONNECTED');
    }
  });

  test('base64 over 70 MB decoded → 413 PAYLOAD_TOO_LARGE naming /base64', async () => {
    const over = 'A'.repeat(Math.ceil(((70 * 1024 * 1024 + 3) * 4) / 3 / 4) * 4);
    const res = await send({ type: 'file', filename: 'big.bin', base64: over });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(res.body.error.details[0].path, '/base64');
  });
});

describe('safe mode', () => {
  test('a typing indicator precedes each send, and sends of a session stay in order', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'careful', start: true, config: { safeMode: true } });
    await daemon.request('POST', '/api/sandbox/sessions/careful/pair', { phoneNumber: '+15550100004' });
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/careful')).body.data.status === 'CONNECTED');
    const sends = ['one', 'two', 'three'].map((text) => daemon.request('POST', '/api/messages/send', { session: 'careful', chatId: B, type: 'text', text }));
    const results = await Promise.all(sends);
    const ids = results.map((r) => r.body.data.messageId);
    const arrived = await Promise.all(ids.map((id) => events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === id, 15000)));
    assert.deepEqual(arrived.map((e) => e.payload.text), ['one', 'two', 'three']);
    const order = events.events.filter((e) => e.session === 'b' && ((e.event === 'presence.update' && e.payload.from.phoneNumber === '+15550100004') || ids.includes(e.payload.messageId)));
    const firstReceived = order.findIndex((e) => e.event === 'message.received');
    assert.ok(firstReceived > 0 && order[firstReceived - 1]!.event === 'presence.update', 'typing comes before the message');
  });
});

describe('status posts and poll votes (sandbox)', () => {
  const C = '+15550100013';
  const D = '+15550100014';

  before(async () => {
    await pairedSession(daemon, 'poster', C, { pushName: 'Carol' });
    // quiet opted out of status posts: it never sees them
    const created = await daemon.request('POST', '/api/sessions', { name: 'quiet', start: true, engine: 'sandbox', config: { ignoreStatus: true } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/quiet/pair', { phoneNumber: D })).status, 200);
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/quiet')).body.data.status === 'CONNECTED', 5000, 'quiet CONNECTED');
  });

  test('a status post needs viewers: named, or contacts the session knows', async () => {
    const none = await daemon.request('POST', '/api/messages/send', { session: 'poster', chatId: 'status@broadcast', type: 'text', text: 'hello' });
    assert.equal(none.status, 400);
    assert.equal(none.body.error.details[0].path, '/statusViewers');
    const tooMany = await daemon.request('POST', '/api/messages/send', {
      session: 'poster',
      chatId: 'status@broadcast',
      type: 'text',
      text: 'hello',
      statusViewers: Array.from({ length: 1001 }, (_, i) => `+1555020${String(i).padStart(4, '0')}`),
    });
    assert.equal(tooMany.status, 400);
    const group = await daemon.request('POST', '/api/messages/send', { session: 'poster', chatId: 'status@broadcast', type: 'text', text: 'hello', statusViewers: ['123@g.us'] });
    assert.equal(group.status, 400);
  });

  test('viewers receive the post from status@broadcast; a session with ignoreStatus does not', async () => {
    const res = await daemon.request('POST', '/api/messages/send', { session: 'poster', chatId: 'status@broadcast', type: 'text', text: 'status for b and d', statusViewers: [B, D] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.statusViewers, 2);
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId, 5000, 'status at b');
    assert.equal(got.payload.chatId, 'status@broadcast');
    assert.equal(got.payload.from.phoneNumber, C);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(events.all((e) => e.session === 'quiet' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId).length, 0);
  });

  test('poll votes: only stored polls, only their options', async () => {
    const poll = await daemon.request('POST', '/api/messages/send', { session: 'poster', chatId: B, type: 'poll', pollTitle: 'Q', pollOptions: ['yes', 'no'], pollMultiSelect: true });
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === poll.body.data.messageId, 5000, 'poll at b');
    const vote = (body: Record<string, unknown>) => daemon.request('POST', '/api/messages/poll-vote', { session: 'b', chatId: got.payload.chatId, pollMessageId: got.payload.messageId, ...body });
    const both = await vote({ options: ['yes', 'no'] });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    const atC = await events.next((e) => e.session === 'poster' && e.event === 'message.vote' && e.payload.pollMessageId === poll.body.data.messageId, 5000, 'vote at c');
    assert.deepEqual(atC.payload.selectedOptions, ['yes', 'no']);
    const withdrawn = await vote({ options: [] });
    assert.equal(withdrawn.status, 200);
    assert.equal((await vote({ options: ['maybe'] })).status, 400);
    const text = await daemon.request('POST', '/api/messages/send', { session: 'poster', chatId: B, type: 'text', text: 'not a poll' });
    await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === text.body.data.messageId, 5000, 'text at b');
    const notPoll = await vote({ pollMessageId: text.body.data.messageId, options: ['yes'] });
    assert.equal(notPoll.status, 400);
    assert.equal((await vote({ chatId: '+15550100099', options: ['yes'] })).status, 404);
    assert.equal((await vote({ extra: 1 })).status, 400);
  });
});
