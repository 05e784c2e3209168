// Contacts end to end on the sandbox: list from the store, get, picture (and hiding it), number check, block/unblock with blocklist.update.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15550700001';
const B = '+15550700002';
const V = '+15550700009';
const jidOf = (phone: string) => `${phone.slice(1)}@s.whatsapp.net`;

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

const api = (method: string, session: string, path: string, body?: unknown) => daemon.request(method, `/api/sessions/${session}${path}`, body);
const c = (id: string, rest = '') => `/contacts/${encodeURIComponent(id)}${rest}`;

describe('contacts', () => {
  test('the list starts empty; whoever writes to the session becomes a contact', async () => {
    const empty = await api('GET', 'a', '/contacts');
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body.data, []);
    assert.equal(empty.headers.get('x-total-count'), '0');
    await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: V, type: 'text', text: 'hi' });
    await events.next((e) => e.session === 'a' && e.event === 'message.received' && e.payload.from.phoneNumber === V);
    const list = await api('GET', 'a', '/contacts');
    assert.equal(list.headers.get('x-total-count'), '1');
    const [contact] = list.body.data;
    assert.deepEqual(Object.keys(contact).sort(), ['businessName', 'id', 'lid', 'name', 'phoneNumber', 'pictureUrl', 'savedName']);
    assert.equal(contact.id, jidOf(V));
    assert.equal(contact.phoneNumber, V);
    assert.match(contact.lid, /^\d+@lid$/);
    assert.equal(contact.name, null);
  });

  test('a profile change reaches the session as contact.update and shows in get and list', async () => {
    const changed = await daemon.request('POST', '/api/sandbox/sessions/a/contacts', {
      phoneNumber: V,
      pushName: 'Vera',
      businessName: 'Vera Shop',
      savedName: 'Vera (work)',
      pictureUrl: 'https://pictures.example/vera.jpg',
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    const event = await events.next((e) => e.session === 'a' && e.event === 'contact.update' && e.payload.id === jidOf(V));
    assert.deepEqual(event.payload, {
      id: jidOf(V),
      phoneNumber: V,
      lid: event.payload.lid,
      name: 'Vera',
      savedName: 'Vera (work)',
      businessName: 'Vera Shop',
      pictureUrl: 'https://pictures.example/vera.jpg',
    });
    const got = await api('GET', 'a', c(V));
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data, {
      id: jidOf(V),
      phoneNumber: V,
      name: 'Vera',
      savedName: 'Vera (work)',
      businessName: 'Vera Shop',
      lid: event.payload.lid,
      pictureUrl: 'https://pictures.example/vera.jpg',
    });
    assert.equal((await api('GET', 'a', c(event.payload.lid))).body.data.id, jidOf(V));
    assert.equal((await api('GET', 'a', c(jidOf(V)))).body.data.name, 'Vera');
    const listed = (await api('GET', 'a', '/contacts')).body.data;
    assert.equal(listed[0].savedName, 'Vera (work)');
    // a later message from the contact leaves what the store knows of it as it is (the list answers from the store)
    const again = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: V, type: 'text', text: 'me again' });
    await events.next((e) => e.session === 'a' && e.event === 'message.received' && e.payload.messageId === again.body.data.messageId);
    assert.deepEqual((await api('GET', 'a', '/contacts')).body.data, listed);
    // the address book is the session's own: B sees the contact's name but no saved name
    const fromB = (await api('GET', 'b', c(V))).body.data;
    assert.equal(fromB.name, 'Vera');
    assert.equal(fromB.savedName, null);
  });

  test('contact.update goes out only when something changed: the same profile again sends none', async () => {
    const updatesOfV = () => events.all((e) => e.session === 'a' && e.event === 'contact.update' && e.payload.id === jidOf(V));
    const before = updatesOfV().length;
    for (let i = 0; i < 3; i += 1) {
      const same = await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V, pushName: 'Vera', savedName: 'Vera (work)' });
      assert.equal(same.status, 200, JSON.stringify(same.body));
    }
    await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V, savedName: 'Vera (home)' });
    const changed = await events.next((e) => e.session === 'a' && e.event === 'contact.update' && e.payload.savedName === 'Vera (home)');
    assert.equal(changed.payload.name, 'Vera');
    // the events arrive in order: every update of V up to the change has been collected
    assert.equal(updatesOfV().length, before + 1, JSON.stringify(updatesOfV().slice(before).map((e) => e.payload)));
    await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V, savedName: 'Vera (work)' });
    await events.next((e) => e.session === 'a' && e.event === 'contact.update' && e.payload.savedName === 'Vera (work)');
  });

  test('another session is a contact with its push name; unknown and invalid ids', async () => {
    const bob = await api('GET', 'a', c(B));
    assert.equal(bob.status, 200);
    assert.equal(bob.body.data.name, 'Bob');
    assert.equal(bob.body.data.pictureUrl, null);
    const unregistered = await api('GET', 'a', c('+9995550700'));
    assert.equal(unregistered.status, 404);
    assert.equal(unregistered.body.error.code, 'CONTACT_NOT_FOUND');
    assert.equal((await api('GET', 'a', c('nobody'))).status, 400);
    const list = await api('GET', 'a', '/contacts?limit=1&offset=1');
    assert.equal(list.headers.get('x-total-count'), '2');
    assert.equal(list.body.data.length, 1);
  });

  test('picture: the URL; 404 PICTURE_NOT_FOUND when there is none or the contact hides it', async () => {
    const picture = await api('GET', 'a', c(V, '/picture'));
    assert.equal(picture.status, 200);
    assert.deepEqual(picture.body.data, { id: jidOf(V), url: 'https://pictures.example/vera.jpg' });
    const none = await api('GET', 'a', c(B, '/picture'));
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, 'PICTURE_NOT_FOUND');

    await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V, pictureHidden: true });
    const hiddenEvent = await events.next((e) => e.session === 'a' && e.event === 'contact.update' && e.payload.id === jidOf(V) && e.payload.pictureUrl === null);
    assert.equal(hiddenEvent.payload.name, 'Vera');
    const hidden = await api('GET', 'a', c(V, '/picture'));
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.error.code, 'PICTURE_NOT_FOUND');
    assert.equal((await api('GET', 'a', c(V))).body.data.pictureUrl, null);

    await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V, pictureHidden: false });
    assert.equal((await api('GET', 'a', c(V, '/picture'))).status, 200);
    await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V, pictureUrl: null });
    assert.equal((await api('GET', 'a', c(V, '/picture'))).status, 404);
    assert.equal((await daemon.request('POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: V })).status, 400);
  });

  test('check: registered numbers with LIDs, +999 not registered, in the order asked; a string that is not a number is a 400 naming it', async () => {
    const invalid = await api('POST', 'a', '/contacts/check', { phoneNumbers: [V, '+9995551234', 'abc', '+1 (555) 070-0010', '', jidOf(B)] });
    assert.equal(invalid.status, 400, JSON.stringify(invalid.body));
    assert.deepEqual(invalid.body.error.details.map((d: { path: string }) => d.path), ['/phoneNumbers/2', '/phoneNumbers/4']);
    const res = await api('POST', 'a', '/contacts/check', { phoneNumbers: [V, '+9995551234', '+1 (555) 070-0010', jidOf(B)] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [v, unregistered, spaced, b] = res.body.data;
    assert.equal(v.phoneNumber, V);
    assert.equal(v.registered, true);
    assert.match(v.lid, /^\d+@lid$/);
    assert.deepEqual(unregistered, { phoneNumber: '+9995551234', registered: false });
    assert.equal(spaced.phoneNumber, '+15550700010');
    assert.equal(spaced.registered, true);
    assert.equal(b.phoneNumber, B);
    assert.equal(b.lid, (await daemon.request('GET', '/api/sessions/b')).body.data.lid);

    const bare = await api('POST', 'a', '/contacts/check', [V]);
    assert.equal(bare.status, 200);
    assert.equal(bare.body.data[0].registered, true);
    assert.equal((await api('POST', 'a', '/contacts/check', [])).status, 400);
    assert.equal((await api('POST', 'a', '/contacts/check', { numbers: [V] })).status, 400);
    assert.equal((await api('POST', 'a', '/contacts/check', { phoneNumbers: [1] })).status, 400);
    assert.equal((await api('POST', 'a', '/contacts/check')).status, 400);
  });

  test('block and unblock: blocklist.update each time; a contact that blocked you cannot be added to your groups', async () => {
    const blocked = await api('POST', 'a', c(V, '/block'));
    assert.equal(blocked.status, 200);
    const event = await events.next((e) => e.session === 'a' && e.event === 'blocklist.update' && e.payload.action === 'blocked');
    assert.deepEqual(event.payload.jids, [jidOf(V)]);
    const unblocked = await api('DELETE', 'a', c(V, '/block'));
    assert.equal(unblocked.status, 200);
    const again = await events.next((e) => e.session === 'a' && e.event === 'blocklist.update' && e.payload.action === 'unblocked');
    assert.deepEqual(again.payload.jids, [jidOf(V)]);
    assert.equal((await api('POST', 'a', c('+9995550701', '/block'))).body.error.code, 'CONTACT_NOT_FOUND');

    await api('POST', 'b', c(A, '/block'));
    const group = await api('POST', 'a', '/groups', { session: 'a', name: 'Blocked', participants: [B] });
    assert.equal(group.body.data.results[0].status, 'failed');
    assert.equal(group.body.data.results[0].error.code, 'PRIVACY_RESTRICTED');
    await api('DELETE', 'b', c(A, '/block'));
  });

  test('scopes: contacts:read reads but cannot block', async () => {
    const key = (await daemon.request('POST', '/api/account/keys', { name: 'contacts', scopes: ['contacts:read'] })).body.data.key;
    assert.equal((await daemon.request('GET', '/api/sessions/a/contacts', undefined, key)).status, 200);
    assert.equal((await daemon.request('POST', '/api/sessions/a/contacts/check', [V], key)).status, 200);
    assert.equal((await daemon.request('POST', `/api/sessions/a${c(V, '/block')}`, undefined, key)).body.error.code, 'FORBIDDEN_SCOPE');
  });

  test('client tokens with read_contact and presence actions reach the contact and presence routes, not block', async () => {
    const rules = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'none', enabled: true, allowedActions: 'read_contact,read_presence,subscribe_presence' });
    assert.equal(rules.status, 200, JSON.stringify(rules.body));
    const token = (await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'browser-1' })).body.data.token;
    assert.equal((await daemon.request('GET', '/api/sessions/a/contacts', undefined, token)).status, 200);
    assert.equal((await daemon.request('GET', `/api/sessions/a${c(V)}`, undefined, token)).status, 200);
    assert.equal((await daemon.request('GET', `/api/sessions/a${c(V, '/picture')}`, undefined, token)).body.error.code, 'PICTURE_NOT_FOUND');
    assert.equal((await daemon.request('POST', '/api/sessions/a/contacts/check', [V], token)).status, 200);
    assert.equal((await daemon.request('POST', `/api/sessions/a/presence/${encodeURIComponent(V)}/subscribe`, undefined, token)).status, 200);
    assert.equal((await daemon.request('GET', `/api/sessions/a/presence/${encodeURIComponent(V)}`, undefined, token)).status, 200);
    assert.equal((await daemon.request('GET', '/api/sessions/a/presence', undefined, token)).status, 200);
    const block = await daemon.request('POST', `/api/sessions/a${c(V, '/block')}`, undefined, token);
    assert.equal(block.status, 403);
    assert.equal(block.body.error.code, 'ACTION_NOT_ALLOWED');
    assert.equal((await daemon.request('GET', '/api/sessions/a/groups', undefined, token)).body.error.code, 'ACTION_NOT_ALLOWED');
  });

  test('a stopped session answers from the store for contacts it has seen', async () => {
    await daemon.request('POST', '/api/sessions/a/stop');
    const known = await api('GET', 'a', c(V));
    assert.equal(known.status, 200);
    assert.equal(known.body.data.name, 'Vera');
    assert.equal((await api('GET', 'a', '/contacts')).body.data.length, 2);
    const unseen = await api('GET', 'a', c('+15550700077'));
    assert.equal(unseen.status, 409);
    assert.equal(unseen.body.error.code, 'SESSION_NOT_CONNECTED');
    assert.equal((await api('GET', 'a', c(V, '/picture'))).body.error.code, 'SESSION_NOT_CONNECTED');
    await daemon.request('POST', '/api/sessions/a/start');
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/a')).body.data.status === 'CONNECTED');
  });
});

test('logging out forgets what the session learned (the next pairing may be another account)', async () => {
  assert.ok((await api('GET', 'b', '/contacts')).body.data.length > 0);
  assert.equal((await daemon.request('POST', '/api/sessions/b/logout')).status, 200);
  const after = await api('GET', 'b', '/contacts');
  assert.equal(after.status, 200);
  assert.deepEqual(after.body.data, []);
});
