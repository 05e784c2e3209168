// Phone numbers and JIDs end to end: each one is checked where it enters, per item, and a bad one is a 400 whose
// `details` names it (not a silent `registered: false`, not a 404 or a 500 further down).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';

const A = '+15550910001';
const B = '+15550910002';
const GROUP = '120363000000000001@g.us';

let daemon: TestDaemon;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'a', A, { business: true, businessName: 'A' });
  await pairedSession(daemon, 'b', B);
});
after(() => daemon.cleanup());

async function refused(method: string, path: string, body: unknown, pointer: string): Promise<void> {
  const res = await daemon.request(method, path, body);
  const where = `${method} ${path} ${JSON.stringify(body)}`;
  assert.equal(res.status, 400, `${where}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, 'VALIDATION_FAILED', where);
  const detail = res.body.error.details.find((d: { path: string }) => d.path === pointer);
  assert.ok(detail, `${where}: no detail for ${pointer} in ${JSON.stringify(res.body.error.details)}`);
  assert.match(detail.message, /^is not a (phone number|group JID)/, where);
}

describe('contacts/check', () => {
  test('a string that is not a phone number is a 400 naming the item, in both body shapes', async () => {
    const numbers = [B, '+15550910003', '15550910004@s.whatsapp.net', 'hello', '+1 555 0910005'];
    await refused('POST', '/api/sessions/a/contacts/check', { phoneNumbers: numbers }, '/phoneNumbers/3');
    await refused('POST', '/api/sessions/a/contacts/check', numbers, '/3');
    for (const bad of ['', '12', 'abc@x', '15550910004@g.us', '+0000000', '123456789012345678', '1e10']) {
      await refused('POST', '/api/sessions/a/contacts/check', { phoneNumbers: [B, bad] }, '/phoneNumbers/1');
    }
  });

  test('valid numbers and user JIDs are still checked', async () => {
    const res = await daemon.request('POST', '/api/sessions/a/contacts/check', { phoneNumbers: [B, '+999 555 0100', '15550910002@s.whatsapp.net'] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.data.map((r: { phoneNumber: string; registered: boolean }) => [r.phoneNumber, r.registered]),
      [[B, true], ['+9995550100', false], [B, true]],
    );
  });
});

describe('every route that takes phone numbers or JIDs checks each one', () => {
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/api/messages/send', { session: 'a', chatId: 'hello', type: 'text', text: 'x' }, '/chatId'],
    ['POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: '@15550910002', mentions: [B, 'bob'] }, '/mentions/1'],
    ['POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'x', quotedMessage: { messageId: 'M1', fromMe: false, participant: 'someone' } }, '/quotedMessage/participant'],
    ['POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'x', quotedMessage: { messageId: 'M1', fromMe: true, chatId: 'chat-1' } }, '/quotedMessage/chatId'],
    ['POST', '/api/sessions/a/messages/react', { chatId: 'x', messageId: 'M1', reaction: '👍' }, '/chatId'],
    ['POST', '/api/sessions/a/messages/typing', { chatId: 'x', state: 'composing' }, '/chatId'],
    ['POST', '/api/sessions/a/messages/seen', { chatId: 'x', messageId: 'M1' }, '/chatId'],
    ['POST', '/api/sessions/a/messages/star', { chatId: GROUP, messageId: 'M1', participant: '12' }, '/participant'],
    ['POST', '/api/sessions/a/groups', { session: 'a', name: 'G', participants: [B, 'not-a-number'] }, '/participants/1'],
    ['POST', `/api/sessions/a/groups/${GROUP}/participants`, { session: 'a', participants: [B, GROUP] }, '/participants/1'],
    ['DELETE', `/api/sessions/a/groups/${GROUP}/participants`, { session: 'a', participants: ['x'] }, '/participants/0'],
    ['POST', '/api/sessions/a/labels/1/chats', { chatIds: [B, 'nope'] }, '/chatIds/1'],
    ['POST', '/api/sessions/a/labels/1/chats', [B, 'nope'], '/1'],
    ['GET', '/api/sessions/a/presence/bob', undefined, '/chatId'],
    ['POST', '/api/sessions/a/presence/bob/subscribe', {}, '/chatId'],
    ['GET', '/api/sessions/a/contacts/bob', undefined, '/contactId'],
    ['POST', '/api/sessions/a/contacts/bob/block', {}, '/contactId'],
    ['POST', '/api/sessions/a/pairing/code', { phoneNumber: '((((((' }, '/phoneNumber'],
    ['POST', '/api/sandbox/sessions/a/inbound', { from: 'alice', type: 'text', text: 'x' }, '/from'],
    ['POST', '/api/sandbox/sessions/a/inbound', { from: B, chatId: 'x@g.us', type: 'text', text: 'x' }, '/chatId'],
    ['POST', '/api/sandbox/sessions/a/presence', { from: '+1', presence: 'available' }, '/from'],
    ['POST', '/api/sandbox/sessions/a/call', { from: 'caller', outcome: 'missed' }, '/from'],
    ['POST', '/api/sandbox/sessions/a/contacts', { phoneNumber: '555-CALL-NOW', pushName: 'x' }, '/phoneNumber'],
    ['POST', '/api/sandbox/sessions/a/groups', { from: B, action: 'add', groupId: GROUP, participants: [B, '?'] }, '/participants/1'],
    ['POST', '/api/sandbox/sessions/a/groups', { from: B, action: 'leave', groupId: '@g.us' }, '/groupId'],
    ['POST', '/api/sandbox/sessions/a/chats', { chatId: 'somebody', action: 'archive' }, '/chatId'],
  ];
  for (const [method, path, body, pointer] of cases) {
    test(`${method} ${path} refuses a bad ${pointer}`, () => refused(method, path, body, pointer));
  }

  test('good ids pass the same routes', async () => {
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: `${B.slice(1)}@c.us`, type: 'text', text: 'hi @15550910002', mentions: [B] });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const typing = await daemon.request('POST', '/api/sessions/a/messages/typing', { chatId: B, state: 'composing' });
    assert.equal(typing.status, 200, JSON.stringify(typing.body));
    const inbound = await daemon.request('POST', '/api/sandbox/sessions/a/inbound', { from: B, type: 'text', text: 'hello' });
    assert.equal(inbound.status, 200, JSON.stringify(inbound.body));
  });
});
