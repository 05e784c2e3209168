// The sandbox's send faults (…/faults): their input rules and bounds, a fault for one chat or any, a held message
// released late, and a cleared one that never comes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'messages:\n  sendAckWaitMs: 300\n' });
  await pairedSession(daemon, 'a', '+15551100001');
});
after(() => daemon?.cleanup());

const fault = (kind: string, body: unknown) => daemon.request('POST', `/api/sandbox/sessions/a/faults/${kind}`, body);
const send = (chatId: string, text: string) => daemon.request('POST', '/api/sessions/a/messages/send', { chatId, type: 'text', text });
const status = async (id: string) => (await daemon.request('GET', `/api/sessions/a/messages/${id}`)).body.data.status as string;

test('bad faults are 400s naming the field; a key other than the master key may not arm one', async () => {
  for (const [body, path] of [
    [{ code: '46' }, '/code'],
    [{ code: 'abc' }, '/code'],
    [{ code: '463', count: 0 }, '/count'],
    [{ code: '463', count: 1001 }, '/count'],
    [{ code: '463', chatId: 'not a chat' }, '/chatId'],
    [{}, '/code'],
  ] as const) {
    const res = await fault('nack', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.ok(JSON.stringify(res.body.error.details).includes(path), `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
  }
  const key = await daemon.request('POST', '/api/admin/keys', { name: 'sender', scopes: ['messages:send'] });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/a/faults/nack', { code: '463' }, key.body.data.key)).status, 403);
});

test('a fault for one chat leaves the others alone, and is spent after its count', async () => {
  assert.equal((await fault('nack', { code: '463', chatId: '+15551100002', count: 2 })).status, 200);
  assert.equal((await send('+15551100003', 'another chat')).status, 200);
  assert.equal((await send('15551100002@s.whatsapp.net', 'one')).status, 422, 'the chat as a JID is the same chat');
  assert.equal((await send('+15551100002', 'two')).status, 422);
  assert.equal((await send('+15551100002', 'three')).status, 200);
});

test('at most 100 faults at once; clearing them forgets the withheld messages, which then time out', async () => {
  for (let i = 0; i < 100; i++) assert.equal((await fault('no-ack', { chatId: '+15551100004' })).status, 200);
  const over = await fault('no-ack', {});
  assert.equal(over.status, 409);
  assert.equal(over.body.error.code, 'LIMIT_REACHED');
  const held = await send('+15551100004', 'held');
  assert.equal(held.status, 200);
  assert.equal(held.body.data.status, 'pending');
  assert.equal((await daemon.request('DELETE', '/api/sandbox/sessions/a/faults')).status, 200);
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/a/faults/release')).body.data.message, '0 withheld messages acked and delivered');
  assert.equal(await status(held.body.data.messageId), 'pending', 'never acked (it fails with timeout after messages.serverAckTimeoutMs)');
  const free = await send('+15551100004', 'free again');
  assert.equal(free.body.data.status, 'sent');
});

test('a held message released late is acked and delivered then', async () => {
  assert.equal((await fault('no-ack', {})).status, 200);
  const held = await send('+15551100005', 'late');
  assert.equal(held.body.data.status, 'pending');
  const released = await daemon.request('POST', '/api/sandbox/sessions/a/faults/release');
  assert.equal(released.body.data.message, '1 withheld messages acked and delivered');
  await waitFor(async () => ((await status(held.body.data.messageId)) === 'read' ? true : undefined), 10_000, 'the released message read by the virtual contact');
});
