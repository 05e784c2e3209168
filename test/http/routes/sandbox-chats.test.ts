// Sandbox controls for calls and chat state: call.* and chat.* events with their payloads; control-route input rules.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';

const A = '+15551000001';
const V = '+15551000009';
const V_JID = '15551000009@s.whatsapp.net';

let daemon: TestDaemon;
let events: EventCollector;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'a', A);
});
after(async () => {
  events.close();
  await daemon.cleanup();
});

const control = (path: string, body: unknown, session = 'a') => daemon.request('POST', `/api/sandbox/sessions/${session}${path}`, body);

describe('sandbox calls and chat state', () => {
  test('a call rings (call.received) and is then accepted under the same call id; missed and rejected calls', async () => {
    const rang = await control('/call', { from: V, outcome: 'received', isVideo: true });
    assert.equal(rang.status, 200);
    const callId = rang.body.data.callId;
    const received = await events.next((e) => e.session === 'a' && e.event === 'call.received' && e.payload.callId === callId);
    assert.deepEqual(received.payload, { callId, from: received.payload.from, chatId: V_JID, isVideo: true, isGroup: false, timestamp: received.payload.timestamp });
    assert.equal(received.payload.from.phoneNumber, V);
    assert.ok(Date.parse(received.payload.timestamp));
    await control('/call', { from: V, outcome: 'accepted', callId });
    const accepted = await events.next((e) => e.session === 'a' && e.event === 'call.accepted');
    assert.equal(accepted.payload.callId, callId);
    assert.equal(accepted.payload.isVideo, false);
    for (const outcome of ['missed', 'rejected']) {
      const res = await control('/call', { from: V, outcome });
      await events.next((e) => e.session === 'a' && e.event === `call.${outcome}` && e.payload.callId === res.body.data.callId);
    }
    assert.equal((await control('/call', { from: V, outcome: 'busy' })).status, 400);
    assert.equal((await control('/call', { from: 'nobody', outcome: 'missed' })).status, 400);
  });

  test('chat state changed on the phone: chat.archive, chat.mute, chat.read, chat.clear, chat.delete', async () => {
    const until = '2030-01-01T00:00:00.000Z';
    const steps: Array<[Record<string, unknown>, string, Record<string, unknown>]> = [
      [{ action: 'archive' }, 'chat.archive', { archived: true }],
      [{ action: 'unarchive' }, 'chat.archive', { archived: false }],
      [{ action: 'mute', muteUntil: until }, 'chat.mute', { muted: true, muteEndTime: until }],
      [{ action: 'unmute' }, 'chat.mute', { muted: false, muteEndTime: null }],
      [{ action: 'read' }, 'chat.read', { read: true }],
      [{ action: 'unread' }, 'chat.read', { read: false }],
      [{ action: 'clear' }, 'chat.clear', {}],
      [{ action: 'delete' }, 'chat.delete', {}],
    ];
    for (const [body, event, fields] of steps) {
      const before = events.events.length;
      const res = await control('/chats', { chatId: V, ...body });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const seen = await events.next((e) => events.events.indexOf(e) >= before && e.session === 'a' && e.event === event, 5000, event);
      const { timestamp, ...rest } = seen.payload;
      assert.ok(Date.parse(timestamp));
      assert.deepEqual(rest, { chatId: V_JID, ...fields });
    }
    assert.equal((await control('/chats', { chatId: V, action: 'pin' })).status, 400);
    assert.equal((await control('/chats', { chatId: 'x', action: 'read' })).status, 400);
  });

  test('control routes need a connected sandbox session', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'idle', engine: 'sandbox' });
    assert.equal((await control('/call', { from: V, outcome: 'missed' }, 'idle')).body.error.code, 'SESSION_NOT_STARTED');
    await daemon.request('POST', '/api/sessions/idle/start');
    assert.equal((await control('/presence', { from: V, presence: 'available' }, 'idle')).body.error.code, 'SESSION_NOT_CONNECTED');
    assert.equal((await control('/presence', { from: V, presence: 'available' }, 'ghost')).status, 404);
  });
});
