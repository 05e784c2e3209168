// A client token may quote only a message of the chat it sends to: a quote carries the quoted message to the recipient,
// so quoting another chat's message would copy that chat's content into the token's conversation. API keys may quote
// any message of the session (WhatsApp's "reply privately").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';

const A = '+15550920001';
const B = '+15550920002';
const C = '+15550920003';
const ORIGIN = 'http://app.example.test';

let daemon: TestDaemon;
let events: EventCollector;
let token: string;
/** a message C sent to A: in chat A↔C */
let secretId: string;
/** a message B sent to A: in chat A↔B */
let fromB: string;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
  await pairedSession(daemon, 'c', C);
  const rules = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'conversation', allowedActions: 'send_message', allowedOrigins: ORIGIN });
  assert.equal(rules.status, 200, JSON.stringify(rules.body));
  const minted = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor-b' });
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  token = minted.body.data.token;

  const secret = await daemon.request('POST', '/api/messages/send', { session: 'c', chatId: A, type: 'text', text: 'the secret of chat A-C' });
  assert.equal(secret.status, 200, JSON.stringify(secret.body));
  secretId = secret.body.data.messageId;
  await events.next((e) => e.session === 'a' && e.event === 'message.received' && e.payload.messageId === secretId);
  const hello = await daemon.request('POST', '/api/messages/send', { session: 'b', chatId: A, type: 'text', text: 'hello from b' });
  fromB = hello.body.data.messageId;
  await events.next((e) => e.session === 'a' && e.event === 'message.received' && e.payload.messageId === fromB);
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const clientSend = (quotedMessage: Record<string, unknown>) =>
  daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'see this', quotedMessage }, token, { Origin: ORIGIN });

describe('quotedMessage with a client token', () => {
  test('a message of another chat is 404 MESSAGE_NOT_FOUND, found by id or named by chatId, and nothing is sent', async () => {
    for (const quoted of [{ messageId: secretId }, { messageId: secretId, chatId: C }, { messageId: secretId, fromMe: false }, { messageId: fromB, chatId: C, fromMe: false }]) {
      const res = await clientSend(quoted);
      assert.equal(res.status, 404, `${JSON.stringify(quoted)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'MESSAGE_NOT_FOUND');
      assert.doesNotMatch(JSON.stringify(res.body), /secret/);
    }
    const unknown = await clientSend({ messageId: 'NEVER_SEEN_1' });
    assert.equal(unknown.status, 404, 'an unknown id answers the same');
    assert.equal(unknown.body.error.code, 'MESSAGE_NOT_FOUND');
  });

  test('a message of the chat being sent to can be quoted', async () => {
    const res = await clientSend({ messageId: fromB });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId);
    assert.equal(got.payload.quotedMessageId, fromB);
    const named = await clientSend({ messageId: fromB, chatId: `${B.slice(1)}@s.whatsapp.net` });
    assert.equal(named.status, 200, JSON.stringify(named.body));
  });
});

describe('quotedMessage with an API key', () => {
  test('may quote a message of another chat of the session (reply privately)', async () => {
    const res = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'replying privately', quotedMessage: { messageId: secretId, chatId: C } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const got = await events.next((e) => e.session === 'b' && e.event === 'message.received' && e.payload.messageId === res.body.data.messageId);
    assert.equal(got.payload.quotedMessageId, secretId);
  });
});
