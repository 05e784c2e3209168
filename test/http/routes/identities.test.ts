// Identities end to end on the sandbox (issue 30): the identity of one person by phone number, phone JID or LID; a
// bounded batch lookup; contact.identity once per learnt pair; sends to a LID or a number land in one chat; access.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15550710001';
const B = '+15550710002';
/** a virtual contact that writes to a */
const V = '+15550710009';
/** a virtual contact nobody has heard of until it is looked up */
const W = '+15550710008';
const NOT_ON_WHATSAPP = '+9995550710';
const jidOf = (phone: string) => `${phone.slice(1)}@s.whatsapp.net`;
const UNKNOWN_LID = '123450000000001@lid';

let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const identity = (session: string, id: string, key?: string) => daemon.request('GET', `/api/sessions/${session}/contacts/${encodeURIComponent(id)}/identity`, undefined, key);
const lookup = (session: string, ids: unknown, key?: string) => daemon.request('POST', `/api/sessions/${session}/identities/lookup`, { ids }, key);
const identityEvents = (session: string, phone: string) => events.all((e) => e.session === session && e.event === 'contact.identity' && e.payload.phoneNumber === phone);

describe('identities', () => {
  let vLid: string;

  test('a contact that writes is learnt once: contact.identity, then the pair by number, phone JID or LID', async () => {
    assert.equal((await identity('a', V)).status, 200, 'a number the network knows is answered from the network');
    // that lookup taught the pair: a writes no second event when V writes
    const learnt = await events.next((e) => e.session === 'a' && e.event === 'contact.identity' && e.payload.phoneNumber === V, 5000, 'contact.identity');
    assert.equal(learnt.payload.jid, jidOf(V));
    assert.equal(learnt.payload.source, 'lookup');
    assert.match(learnt.payload.lid, /^\d+@lid$/);
    vLid = learnt.payload.lid;
    for (const text of ['one', 'two']) {
      await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: V, type: 'text', text, senderLidOnly: true });
      await events.next((e) => e.session === 'a' && e.event === 'message.received' && e.payload.text === text, 5000, text);
    }
    assert.equal(identityEvents('a', V).length, 1, 'one contact.identity per pair, not one per message');

    for (const id of [V, V.slice(1), jidOf(V), vLid]) {
      const res = await waitFor(async () => {
        const r = await identity('a', id);
        return r.status === 200 && r.body.data.seenAt !== null ? r : undefined;
      }, 5000, `identity of ${id} from the store`);
      assert.deepEqual(Object.keys(res.body.data).sort(), ['id', 'jid', 'learntAt', 'lid', 'phoneNumber', 'seenAt', 'source']);
      assert.equal(res.body.data.source, 'lookup', 'learnt by the first lookup');
      assert.ok(Date.parse(res.body.data.learntAt) <= Date.parse(res.body.data.seenAt));
      assert.equal(res.body.data.jid, jidOf(V));
      assert.equal(res.body.data.phoneNumber, V);
      assert.equal(res.body.data.lid, vLid);
      assert.ok(Date.parse(res.body.data.seenAt) > 0);
    }
    assert.equal((await identity('a', vLid)).body.data.id, vLid);
  });

  test('a LID-only message names both ids, and its chat is the phone JID', async () => {
    const got = events.all((e) => e.session === 'a' && e.event === 'message.received' && e.payload.text === 'two')[0]!;
    assert.deepEqual(got.payload.from, { jid: jidOf(V), phoneNumber: V, lid: vLid });
    assert.equal(got.payload.chatId, jidOf(V));
  });

  test('stored messages and the chat list name the person by both ids', async () => {
    const chat = await daemon.request('GET', `/api/sessions/a/chats/${encodeURIComponent(vLid)}`);
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    assert.equal(chat.body.data.chatId, jidOf(V), 'the LID of a known number is the number\'s chat');
    assert.equal(chat.body.data.phoneNumber, V);
    assert.equal(chat.body.data.lid, vLid);
    const page = await daemon.request('GET', `/api/sessions/a/chats/${encodeURIComponent(vLid)}/messages`);
    assert.equal(page.status, 200);
    const texts = page.body.data.messages.map((m: { text: string }) => m.text);
    assert.deepEqual(texts, ['one', 'two']);
    for (const m of page.body.data.messages) {
      assert.equal(m.sender, jidOf(V));
      assert.equal(m.senderPhoneNumber, V);
      assert.equal(m.senderLid, vLid);
    }
    const listed = (await daemon.request('GET', '/api/sessions/a/messages?limit=10')).body.data.find((m: { text: string }) => m.text === 'two');
    assert.equal(listed.senderLid, vLid);
  });

  test('unknown: a LID the session never saw, a number not on WhatsApp (404 IDENTITY_NOT_FOUND)', async () => {
    for (const id of [UNKNOWN_LID, NOT_ON_WHATSAPP]) {
      const res = await identity('a', id);
      assert.equal(res.status, 404, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'IDENTITY_NOT_FOUND');
    }
    assert.equal((await identity('nobody', V)).body.error.code, 'SESSION_NOT_FOUND');
  });

  test('a batch: stored pairs, a number asked of the network, unknowns as null, in the order asked', async () => {
    const res = await lookup('a', [V, NOT_ON_WHATSAPP, vLid, UNKNOWN_LID, W, jidOf(V)]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [v, none, byLid, unknownLid, w, again] = res.body.data;
    assert.equal(v.lid, vLid);
    assert.equal(v.source, 'lookup');
    assert.ok(v.seenAt, 'from the store');
    assert.equal(none, null);
    assert.equal(byLid.phoneNumber, V);
    assert.equal(byLid.id, vLid);
    assert.equal(unknownLid, null);
    assert.equal(w.phoneNumber, W);
    assert.equal(w.source, 'lookup');
    assert.equal(w.seenAt, null);
    assert.match(w.lid, /@lid$/);
    assert.equal(again.jid, jidOf(V));
    await events.next((e) => e.session === 'a' && e.event === 'contact.identity' && e.payload.phoneNumber === W, 5000, 'the looked-up pair is learnt');
  });

  test('bounds and validation: at most 100 ids, each a person', async () => {
    const tooMany = await lookup('a', Array.from({ length: 101 }, (_, i) => `+1555071${String(i).padStart(4, '0')}`));
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.error.code, 'VALIDATION_FAILED');
    const bad = await lookup('a', [V, '120363000000000001@g.us']);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details[0].path, '/ids/1');
    assert.equal((await lookup('a', [])).status, 400);
    assert.equal((await daemon.request('POST', '/api/sessions/a/identities/lookup', { ids: [V], more: 1 })).status, 400);
    const longId = await identity('a', `${'1'.repeat(200)}@lid`);
    assert.equal(longId.status, 400);
    assert.equal((await identity('a', 'not-a-person')).status, 400);
  });

  test('a send to the LID and to the number land in one chat, at the sender and at the peer', async () => {
    const bLid = (await identity('a', B)).body.data.lid as string;
    const toLid = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: bLid, type: 'text', text: 'to your lid' });
    assert.equal(toLid.status, 200, JSON.stringify(toLid.body));
    assert.equal(toLid.body.data.chatId, jidOf(B), 'stored under the phone JID');
    assert.equal(toLid.body.data.lid, bLid);
    const toPhone = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'to your number' });
    assert.equal(toPhone.body.data.chatId, jidOf(B));
    const atPeer = await Promise.all(
      ['to your lid', 'to your number'].map((text) => events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.text === text, 5000, text)),
    );
    assert.deepEqual(atPeer.map((e) => e.payload.chatId), [jidOf(A), jidOf(A)], 'one chat at the peer');
    // the acks of the LID send reach the stored message (they name the same chat)
    await waitFor(async () => {
      const page = await daemon.request('GET', `/api/sessions/a/chats/${encodeURIComponent(jidOf(B))}/messages`);
      const sent = page.body.data.messages.find((m: { messageId: string }) => m.messageId === toLid.body.data.messageId);
      return sent?.status === 'delivered' || sent?.status === 'read';
    }, 5000, 'the ack of the LID send applied');
    const chats = (await daemon.request('GET', '/api/sessions/a/chats')).body.data.chats as Array<{ chatId: string }>;
    assert.deepEqual(chats.filter((c) => c.chatId === jidOf(B) || c.chatId === bLid).map((c) => c.chatId), [jidOf(B)]);
    const peerChats = (await daemon.request('GET', '/api/sessions/b/chats')).body.data.chats as Array<{ chatId: string }>;
    assert.equal(peerChats.filter((c) => c.chatId === jidOf(A) || c.chatId.endsWith('@lid')).length, 1);
  });

  test('a stopped session answers from the stored pairs; numbers it does not know are null (409 for one)', async () => {
    assert.equal((await daemon.request('POST', '/api/sessions/a/stop')).status, 200);
    const res = await lookup('a', [V, '+15550710007']);
    assert.equal(res.status, 200);
    assert.equal(res.body.data[0].lid, vLid);
    assert.equal(res.body.data[1], null);
    assert.equal((await identity('a', V)).status, 200);
    assert.equal((await identity('a', '+15550710007')).body.error.code, 'SESSION_NOT_CONNECTED');
    assert.equal((await daemon.request('POST', '/api/sessions/a/start')).status, 200);
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/a')).body.data.status === 'CONNECTED', 5000, 'a CONNECTED');
  });

  test('access: contacts:read, and a session-limited key sees only its session', async () => {
    const limited = (await daemon.request('POST', '/api/account/keys', { name: 'only-b', scopes: ['contacts:read'], sessions: ['b'] })).body.data.key;
    assert.equal((await identity('b', A, limited)).status, 200);
    const other = await identity('a', V, limited);
    assert.equal(other.status, 403, JSON.stringify(other.body));
    assert.equal(other.body.error.code, 'FORBIDDEN_SESSION');
    assert.equal((await lookup('a', [V], limited)).status, 403);
    const noScope = (await daemon.request('POST', '/api/account/keys', { name: 'media', scopes: ['media:read'] })).body.data.key;
    assert.equal((await identity('a', V, noScope)).body.error.code, 'FORBIDDEN_SCOPE');
    assert.equal((await lookup('a', [V], noScope)).body.error.code, 'FORBIDDEN_SCOPE');
  });
});
