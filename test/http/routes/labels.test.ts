// Labels end to end on the sandbox: business accounts only, create/update/delete, chat assignment, labels.update events.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const SHOP = '+15550800001';
const PERSON = '+15550800002';
const CUSTOMER = '+15550800009';
const jidOf = (phone: string) => `${phone.slice(1)}@s.whatsapp.net`;

let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'shop', SHOP, { business: true, businessName: 'The Shop' });
  await pairedSession(daemon, 'person', PERSON);
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const api = (method: string, session: string, path: string, body?: unknown) => daemon.request(method, `/api/sessions/${session}${path}`, body);

describe('labels', () => {
  test('a consumer account gets 403 NOT_BUSINESS_ACCOUNT on every label route', async () => {
    assert.equal((await daemon.request('GET', '/api/sessions/person')).body.data.platform, 'consumer');
    for (const [method, path, body] of [
      ['GET', '/labels', undefined],
      ['POST', '/labels', { name: 'VIP', color: 1 }],
      ['PUT', '/labels/1', { name: 'x' }],
      ['DELETE', '/labels/1', undefined],
      ['GET', '/labels/1/chats', undefined],
      ['POST', '/labels/1/chats', { chatIds: [CUSTOMER] }],
      ['DELETE', '/labels/1/chats', [CUSTOMER]],
    ] as const) {
      const res = await api(method, 'person', path, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'NOT_BUSINESS_ACCOUNT');
    }
  });

  test('create: 201 {id, name, color}, ids numbered by the gateway; labels.update created', async () => {
    const first = await api('POST', 'shop', '/labels', { name: 'VIP', color: 3 });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.deepEqual(first.body.data, { id: '1', name: 'VIP', color: 3 });
    const event = await events.next((e) => e.session === 'shop' && e.event === 'labels.update' && e.payload.label?.id === '1');
    assert.equal(event.payload.action, 'created');
    assert.deepEqual(event.payload.label, { id: '1', name: 'VIP', color: 3 });
    const second = await api('POST', 'shop', '/labels', { name: 'Paid', color: 0 });
    assert.deepEqual(second.body.data, { id: '2', name: 'Paid', color: 0 });
    assert.equal((await api('POST', 'shop', '/labels', { name: 'X', color: 20 })).status, 400);
    assert.equal((await api('POST', 'shop', '/labels', { name: '', color: 1 })).status, 400);
    assert.equal((await api('POST', 'shop', '/labels', { name: 'X' })).status, 400);
    const list = await api('GET', 'shop', '/labels');
    assert.equal(list.headers.get('x-total-count'), '2');
    assert.deepEqual(list.body.data, [
      { id: '1', name: 'VIP', color: 3 },
      { id: '2', name: 'Paid', color: 0 },
    ]);
  });

  test('update: name and/or colour; labels.update updated; an empty body or unknown label is refused', async () => {
    const res = await api('PUT', 'shop', '/labels/1', { color: 5 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { id: '1', name: 'VIP', color: 5 });
    const event = await events.next((e) => e.session === 'shop' && e.event === 'labels.update' && e.payload.action === 'updated');
    assert.deepEqual(event.payload.label, { id: '1', name: 'VIP', color: 5 });
    assert.deepEqual((await api('PUT', 'shop', '/labels/1', { name: 'Gold' })).body.data, { id: '1', name: 'Gold', color: 5 });
    assert.equal((await api('PUT', 'shop', '/labels/1', {})).status, 400);
    const unknown = await api('PUT', 'shop', '/labels/77', { name: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'LABEL_NOT_FOUND');
    assert.equal((await api('PUT', 'shop', '/labels/a%20b', { name: 'x' })).status, 400);
  });

  test('chats: assign ({chatIds} or a bare array), list, unassign; labels.update assigned/unassigned', async () => {
    const group = (await api('POST', 'shop', '/groups', { session: 'shop', name: 'Orders', participants: [CUSTOMER] })).body.data.id;
    const assigned = await api('POST', 'shop', '/labels/1/chats', { chatIds: [CUSTOMER, group] });
    assert.equal(assigned.status, 200, JSON.stringify(assigned.body));
    assert.deepEqual(assigned.body.data, { labelId: '1', chatIds: [group, jidOf(CUSTOMER)].sort() });
    const event = await events.next((e) => e.session === 'shop' && e.event === 'labels.update' && e.payload.action === 'assigned' && e.payload.chatId === group);
    assert.equal(event.payload.labelId, '1');
    const bare = await api('POST', 'shop', '/labels/2/chats', [CUSTOMER]);
    assert.deepEqual(bare.body.data, { labelId: '2', chatIds: [jidOf(CUSTOMER)] });
    const chats = await api('GET', 'shop', '/labels/1/chats');
    assert.equal(chats.headers.get('x-total-count'), '2');
    assert.deepEqual(chats.body.data, [group, jidOf(CUSTOMER)].sort());

    const removed = await api('DELETE', 'shop', '/labels/1/chats', [CUSTOMER]);
    assert.deepEqual(removed.body.data, { labelId: '1', chatIds: [group] });
    const gone = await events.next((e) => e.session === 'shop' && e.event === 'labels.update' && e.payload.action === 'unassigned');
    assert.deepEqual({ labelId: gone.payload.labelId, chatId: gone.payload.chatId }, { labelId: '1', chatId: jidOf(CUSTOMER) });

    assert.equal((await api('POST', 'shop', '/labels/1/chats', { chatIds: ['status@broadcast'] })).status, 400);
    assert.equal((await api('POST', 'shop', '/labels/1/chats', { chatIds: [] })).status, 400);
    assert.equal((await api('POST', 'shop', '/labels/1/chats', { chats: [CUSTOMER] })).status, 400);
    assert.equal((await api('POST', 'shop', '/labels/9/chats', [CUSTOMER])).body.error.code, 'LABEL_NOT_FOUND');
  });

  test('delete: the label and its assignments go; labels.update deleted', async () => {
    const res = await api('DELETE', 'shop', '/labels/1');
    assert.equal(res.status, 200);
    const event = await events.next((e) => e.session === 'shop' && e.event === 'labels.update' && e.payload.action === 'deleted');
    assert.equal(event.payload.label.id, '1');
    assert.equal((await api('GET', 'shop', '/labels/1/chats')).body.error.code, 'LABEL_NOT_FOUND');
    assert.equal((await api('DELETE', 'shop', '/labels/1')).status, 404);
    assert.deepEqual((await api('GET', 'shop', '/labels')).body.data.map((l: { id: string }) => l.id), ['2']);
    // the next id follows the highest one in use
    assert.equal((await api('POST', 'shop', '/labels', { name: 'New', color: 1 })).body.data.id, '3');
  });
});
