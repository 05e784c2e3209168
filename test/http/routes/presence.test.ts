// Presence end to end on the sandbox: set own, subscribe, presence.update from contacts and sessions, last-known presence from the store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15550600001';
const B = '+15550600002';
const V = '+15550600009';
const W = '+15550600010';
const jidOf = (phone: string) => `${phone.slice(1)}@s.whatsapp.net`;

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

const api = (method: string, session: string, path: string, body?: unknown) => daemon.request(method, `/api/sessions/${session}${path}`, body);
const contactPresence = (body: Record<string, unknown>, session = 'a') => daemon.request('POST', `/api/sandbox/sessions/${session}/presence`, body);

describe('presence', () => {
  test('set own presence: available or unavailable; anything else is a 400', async () => {
    const res = await api('POST', 'a', '/presence', { presence: 'available' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { success: true, message: 'presence set to available' });
    assert.equal((await api('POST', 'a', '/presence', { presence: 'away' })).status, 400);
    assert.equal((await api('POST', 'a', '/presence', {})).status, 400);
  });

  test('before subscribing nothing is known (404); after it the contact is listed, unavailable until it shows up', async () => {
    const unknown = await api('GET', 'a', `/presence/${encodeURIComponent(V)}`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'CONTACT_NOT_FOUND');
    const sub = await api('POST', 'a', `/presence/${encodeURIComponent(V)}/subscribe`);
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    assert.deepEqual((await api('GET', 'a', `/presence/${encodeURIComponent(V)}`)).body.data, { chatId: jidOf(V), presence: 'unavailable' });
    const list = await api('GET', 'a', '/presence');
    assert.equal(list.headers.get('x-total-count'), '1');
    assert.deepEqual(list.body.data, [{ chatId: jidOf(V), presence: 'unavailable' }]);
    assert.equal((await api('POST', 'a', '/presence/not-a-number/subscribe')).status, 400);
    assert.equal((await api('POST', 'a', `/presence/${encodeURIComponent('120363111111111111@g.us')}/subscribe`)).status, 400);
  });

  test('a subscribed contact comes online: presence.update with the SPEC payload; GET returns it', async () => {
    const res = await contactPresence({ from: V, presence: 'available' });
    assert.deepEqual(res.body.data, { delivered: true });
    const event = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.from.jid === jidOf(V));
    assert.deepEqual(event.payload.from, { jid: jidOf(V), phoneNumber: V, lid: event.payload.from.lid });
    assert.match(event.payload.from.lid, /^\d+@lid$/);
    assert.equal(event.payload.state, 'paused');
    assert.equal(event.payload.unavailable, false);
    assert.equal(event.payload.presence, 'available');
    assert.equal(event.payload.sender, undefined);
    assert.deepEqual((await api('GET', 'a', `/presence/${encodeURIComponent(jidOf(V))}`)).body.data, { chatId: jidOf(V), presence: 'available' });
  });

  test('going offline carries lastSeen (Unix in the event, ISO 8601 in the record)', async () => {
    const lastSeen = '2025-01-02T03:04:05.000Z';
    await contactPresence({ from: V, presence: 'unavailable', lastSeen });
    const event = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.unavailable === true);
    assert.equal(event.payload.lastSeen, Date.parse(lastSeen) / 1000);
    assert.equal(event.payload.state, 'paused');
    assert.deepEqual((await api('GET', 'a', `/presence/${encodeURIComponent(V)}`)).body.data, { chatId: jidOf(V), presence: 'unavailable', lastSeen });
  });

  test('typing and recording: state composing, media audio; the record says composing or recording', async () => {
    await contactPresence({ from: V, presence: 'composing' });
    const typing = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.state === 'composing' && e.payload.media === undefined);
    assert.equal(typing.payload.unavailable, false);
    assert.equal((await api('GET', 'a', `/presence/${encodeURIComponent(V)}`)).body.data.presence, 'composing');
    await contactPresence({ from: V, presence: 'recording' });
    const recording = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.media === 'audio');
    assert.equal(recording.payload.state, 'composing');
    assert.equal(recording.payload.presence, 'recording');
    const record = (await api('GET', 'a', `/presence/${encodeURIComponent(V)}`)).body.data;
    assert.equal(record.presence, 'recording');
    assert.equal(record.lastSeen, '2025-01-02T03:04:05.000Z');
  });

  test('availability of a contact nobody subscribed to reaches no one', async () => {
    const res = await contactPresence({ from: W, presence: 'available' });
    assert.deepEqual(res.body.data, { delivered: false });
    assert.equal((await api('GET', 'a', `/presence/${encodeURIComponent(W)}`)).status, 404);
    // subscribing later: the network answers with the presence it knows at once
    await api('POST', 'a', `/presence/${encodeURIComponent(W)}/subscribe`);
    const event = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.from.jid === jidOf(W));
    assert.equal(event.payload.presence, 'available');
    assert.equal((await api('GET', 'a', `/presence/${encodeURIComponent(W)}`)).body.data.presence, 'available');
  });

  test('between sessions: A subscribes to B; B going offline reaches A with lastSeen', async () => {
    await api('POST', 'a', `/presence/${encodeURIComponent(B)}/subscribe`);
    assert.equal((await api('POST', 'b', '/presence', { presence: 'unavailable' })).status, 200);
    const event = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.from.jid === jidOf(B) && e.payload.unavailable === true);
    assert.equal(typeof event.payload.lastSeen, 'number');
    const list = await api('GET', 'a', '/presence');
    assert.equal(list.headers.get('x-total-count'), '3');
    const b = list.body.data.find((r: { chatId: string }) => r.chatId === jidOf(B));
    assert.equal(b.presence, 'unavailable');
    assert.ok(Date.parse(b.lastSeen));
    assert.equal((await api('GET', 'a', '/presence?limit=1&offset=1')).body.data.length, 1);
  });

  test('typing inside a group: from is the group, sender the member; the member\'s own record is untouched', async () => {
    const created = await api('POST', 'a', '/groups', { session: 'a', name: 'Typing', participants: [V] });
    const groupId = created.body.data.id;
    const before = (await api('GET', 'a', `/presence/${encodeURIComponent(V)}`)).body.data.presence;
    await contactPresence({ from: V, presence: 'composing', chatId: groupId });
    const event = await events.next((e) => e.session === 'a' && e.event === 'presence.update' && e.payload.from.jid === groupId);
    assert.equal(event.payload.sender.phoneNumber, V);
    assert.equal(event.payload.state, 'composing');
    assert.equal((await api('GET', 'a', `/presence/${encodeURIComponent(V)}`)).body.data.presence, before);
  });
});
