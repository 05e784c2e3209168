// Sandbox controls for calls, chat state and history sync: call.*, chat.* and history.sync events with their payloads; control-route input rules.
import { after, before, describe, test } from 'node:test';
import { openDaemonDb } from '../../helpers/daemon-db.js';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector, type StreamedEvent } from '../../helpers/events.js';

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
  test('a call rings (call.received) and is then accepted under the same call id; missed, cancelled and rejected calls', async () => {
    const rang = await control('/call', { from: V, outcome: 'received', isVideo: true });
    assert.equal(rang.status, 200);
    const callId = rang.body.data.callId;
    const received = await events.next((e) => e.session === 'a' && e.event === 'call.received' && e.payload.callId === callId);
    const { timestamp, offeredAt } = received.payload;
    assert.deepEqual(received.payload, { callId, from: received.payload.from, chatId: V_JID, isVideo: true, isGroup: false, status: 'ringing', offeredAt, timestamp });
    assert.equal(received.payload.from.phoneNumber, V);
    assert.ok(Date.parse(timestamp));
    assert.equal(offeredAt, timestamp);
    // ringing again under the same id is the same call
    assert.equal((await control('/call', { from: V, outcome: 'received', callId })).body.data.callId, callId);
    await control('/call', { from: V, outcome: 'accepted', callId });
    const accepted = await events.next((e) => e.session === 'a' && e.event === 'call.accepted');
    assert.equal(accepted.payload.callId, callId);
    assert.equal(accepted.payload.isVideo, true, 'the call keeps what its offer said');
    assert.equal(accepted.payload.status, 'accepted');
    assert.equal(accepted.payload.offeredAt, offeredAt);
    assert.equal(accepted.payload.endedBy, undefined);
    // the call is over: it cannot end again, nor be rejected
    const over = await control('/call', { from: V, outcome: 'missed', callId });
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, 'CALL_ENDED');
    assert.equal((await daemon.request('POST', `/api/sessions/a/calls/${callId}/reject`, {})).body.error.code, 'CALL_ENDED');
    // a call of another caller is not this one
    const ringing = (await control('/call', { from: V, outcome: 'received' })).body.data.callId;
    assert.equal((await control('/call', { from: '+15551000008', outcome: 'missed', callId: ringing })).body.error.code, 'CALL_NOT_FOUND');
    for (const [outcome, event, endedBy] of [
      ['missed', 'call.missed', 'timeout'],
      ['cancelled', 'call.missed', 'caller'],
      ['rejected', 'call.rejected', 'device'],
    ] as const) {
      const res = await control('/call', { from: V, outcome });
      // a new call with an ending outcome rings first
      await events.next((e) => e.session === 'a' && e.event === 'call.received' && e.payload.callId === res.body.data.callId);
      const ended = await events.next((e) => e.session === 'a' && e.event === event && e.payload.callId === res.body.data.callId);
      assert.equal(ended.payload.endedBy, endedBy);
      const view = await daemon.request('GET', `/api/sandbox/sessions/a/calls/${res.body.data.callId}`);
      assert.equal(view.body.data.callerSaw, event === 'call.missed' ? 'missed' : 'rejected');
    }
    assert.equal((await control('/call', { from: V, outcome: 'busy' })).status, 400);
    assert.equal((await control('/call', { from: 'nobody', outcome: 'missed' })).status, 400);
    assert.equal((await control('/call', { from: V, outcome: 'missed', callId: 'no spaces' })).status, 400);
    assert.equal((await control('/call', { from: V, outcome: 'missed', callId: 'x'.repeat(129) })).status, 400);
    assert.equal((await daemon.request('GET', '/api/sandbox/sessions/a/calls/UNKNOWN')).body.error.code, 'CALL_NOT_FOUND');
  });

  test('chat state changed on the phone: chat.archive, chat.pin, chat.mute, chat.read, chat.clear, chat.delete', async () => {
    const until = '2030-01-01T00:00:00.000Z';
    const steps: Array<[Record<string, unknown>, string, Record<string, unknown>]> = [
      [{ action: 'archive' }, 'chat.archive', { archived: true }],
      [{ action: 'unarchive' }, 'chat.archive', { archived: false }],
      [{ action: 'pin' }, 'chat.pin', { pinned: true }],
      [{ action: 'unpin' }, 'chat.pin', { pinned: false }],
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
    assert.equal((await control('/chats', { chatId: V, action: 'star' })).status, 400);
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

/** The messages the daemon stored for a session, read from its database (read-only, beside the running daemon). */
async function storedMessages(d: TestDaemon, session: string): Promise<Array<{ id: string; chat_id: string; from_me: number; text: string }>> {
  const db = openDaemonDb(d.dataDir, { readonly: true, fileMustExist: true });
  try {
    return (await db.prepare('SELECT id, chat_id, from_me, text FROM messages WHERE session = ? ORDER BY timestamp').all(session)) as any[];
  } finally {
    await db.close();
  }
}

/**
 * The stored history messages once `count` are there: the daemon commits the writes of one event-loop tick on the next
 * (src/store/db.ts createTickTransaction), so another connection can see an event before its rows.
 */
async function committed(d: TestDaemon, session: string, count: number) {
  let last = 0;
  const synced = async () => (await storedMessages(d, session)).filter((m) => m.text?.startsWith('history message '));
  await waitFor(async () => (last = (await synced()).length) >= count, 5000, `${count} stored history messages of ${session}`).catch((err: Error) => {
    throw new Error(`${err.message} (saw ${last})`);
  });
  return synced();
}

const isHistory = (session: string) => (e: StreamedEvent) => e.session === session && e.event === 'history.sync';

/** Waits until a virtual contact's message reaches `session`: every event emitted before it was streamed by then. */
async function marker(d: TestDaemon, collector: EventCollector, session: string): Promise<void> {
  const sent = await d.request('POST', `/api/sandbox/sessions/${session}/inbound`, { from: V, type: 'text', text: 'marker' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  await collector.next((e) => e.session === session && e.event === 'message.received' && e.payload.messageId === sent.body.data.messageId, 5000, 'the marker message');
}

describe('sandbox history sync', () => {
  test('the history route: history.sync with the documented summary, the messages stored; bounds', async () => {
    const res = await control('/history', { messages: 4, chats: 2 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.messages, 4);
    assert.equal(typeof res.body.data.durationMs, 'number');
    const sync = await events.next(isHistory('a'), 5000, 'history.sync of a');
    assert.deepEqual(sync.payload, { syncType: 'FULL', chunk: 1, progress: 100, messageCount: 4, chatCount: 2 });
    const stored = await committed(daemon, 'a', 4);
    assert.deepEqual(stored.map((m) => m.text).sort(), ['history message 1', 'history message 2', 'history message 3', 'history message 4']);
    assert.deepEqual(new Set(stored.map((m) => m.chat_id)), new Set(['15550990000@s.whatsapp.net', '15550990001@s.whatsapp.net']));

    const empty = await control('/history', { messages: 0 });
    assert.equal(empty.status, 200);
    const none = await events.next((e) => isHistory('a')(e) && e !== sync, 5000, 'the empty history.sync');
    assert.deepEqual(none.payload, { syncType: 'FULL', chunk: 1, progress: 100, messageCount: 0, chatCount: 0 });

    for (const [body, path] of [
      [{ messages: -1 }, '/messages'],
      [{ messages: 100_001 }, '/messages'],
      [{ messages: 1, chats: 0 }, '/chats'],
      [{ messages: 1, chats: 10_001 }, '/chats'],
    ] as const) {
      const bad = await control('/history', body);
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
      assert.equal(bad.body.error.details[0].path, path, JSON.stringify(bad.body.error));
    }
    assert.equal((await control('/history', {})).status, 400);
    assert.equal((await control('/history', { messages: 1, extra: true })).status, 400);
  });

  test('a burst and a history take at most 100,000 messages (one request must not fill the disk): 400 above, before any is sent', async () => {
    for (const [path, body, field] of [
      ['/inbound/burst', { count: 100_001 }, '/count'],
      ['/inbound/burst', { count: 362_881 }, '/count'],
      ['/history', { messages: 362_881 }, '/messages'],
      ['/pair', { history: { messages: 100_001 } }, '/history/messages'],
    ] as const) {
      const bad = await control(path, body);
      assert.equal(bad.status, 400, `${path} ${JSON.stringify(body)}: ${JSON.stringify(bad.body)}`);
      assert.equal(bad.body.error.details[0].path, field, JSON.stringify(bad.body.error));
    }
    const burst = await control('/inbound/burst', { count: 3, contacts: 1 });
    assert.equal(burst.status, 200, JSON.stringify(burst.body));
  });

  test('pairing with a seeded history: history.sync chunks after the link, messages stored and quotable', async () => {
    const H = '+15551000002';
    await pairedSession(daemon, 'h', H, { history: { messages: 7500, chats: 3 } });
    const first = await events.next((e) => isHistory('h')(e) && e.payload.chunk === 1, 5000, 'chunk 1');
    const second = await events.next((e) => isHistory('h')(e) && e.payload.chunk === 2, 5000, 'chunk 2');
    assert.deepEqual(first.payload, { syncType: 'FULL', chunk: 1, progress: 67, messageCount: 5000, chatCount: 3 });
    assert.deepEqual(second.payload, { syncType: 'FULL', chunk: 2, progress: 100, messageCount: 2500, chatCount: 3 });
    // the link comes first: the session was CONNECTED before the phone sent its history
    const connected = events.events.findIndex((e) => e.session === 'h' && e.event === 'session.status' && e.payload.status === 'CONNECTED');
    assert.ok(connected >= 0 && connected < events.events.indexOf(first), 'session.status CONNECTED precedes history.sync');

    const stored = await committed(daemon, 'h', 7500);
    assert.equal(stored.length, 7500);
    assert.equal(new Set(stored.map((m) => m.chat_id)).size, 3);
    assert.ok(stored.some((m) => m.from_me === 1) && stored.some((m) => m.from_me === 0));

    // the send route finds a synced message in the store: it can be quoted without saying who wrote it
    const old = stored.find((m) => m.from_me === 0)!;
    const quoting = await daemon.request('POST', '/api/messages/send', { session: 'h', chatId: old.chat_id, type: 'text', text: 'about that', quotedMessage: { messageId: old.id } });
    assert.equal(quoting.status, 200, JSON.stringify(quoting.body));
    const sent = await events.next((e) => e.session === 'h' && e.event === 'message.sent' && e.payload.messageId === quoting.body.data.messageId);
    assert.equal(sent.payload.quotedMessageId, old.id);
    const unknown = await daemon.request('POST', '/api/messages/send', { session: 'h', chatId: old.chat_id, type: 'text', text: 'about that', quotedMessage: { messageId: 'NOT_SYNCED_0001' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'MESSAGE_NOT_FOUND');

    // reconnects and restarts of the linked session send no history again
    const dropped = await control('/disconnect', { reason: 'AUTO_RECONNECT' }, 'h');
    assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/h')).body.data.status === 'CONNECTED', 15_000, 'h reconnected');
    assert.equal((await daemon.request('POST', '/api/sessions/h/stop')).status, 200);
    assert.equal((await daemon.request('POST', '/api/sessions/h/start')).status, 200);
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/h')).body.data.status === 'CONNECTED', 5000, 'h restarted');
    await marker(daemon, events, 'h');
    assert.equal(events.all(isHistory('h')).length, 2);
    assert.equal((await storedMessages(daemon, 'h')).filter((m) => m.text?.startsWith('history message ')).length, 7500);
  });

  test('pairing without history sends none', async () => {
    await pairedSession(daemon, 'n', '+15551000003');
    await marker(daemon, events, 'n');
    assert.deepEqual(events.all(isHistory('n')), []);
  });

  test('the pairing history is validated before anything happens', async () => {
    await daemon.request('POST', '/api/sessions', { name: 'v', start: true, engine: 'sandbox' });
    for (const [history, path] of [
      [{ messages: -1 }, '/history/messages'],
      [{ messages: 1_000_001 }, '/history/messages'],
      [{ messages: 10, chats: 0 }, '/history/chats'],
      [{ chats: 2 }, '/history/messages'],
    ] as const) {
      const bad = await control('/pair', { phoneNumber: '+15551000004', history }, 'v');
      assert.equal(bad.status, 400, JSON.stringify(history));
      assert.equal(bad.body.error.details[0].path, path, JSON.stringify(bad.body.error));
    }
    assert.notEqual((await daemon.request('GET', '/api/sessions/v')).body.data.status, 'CONNECTED');
  });

  test('a daemon restart logs the session in again without another history sync', async () => {
    const first = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
    let second: TestDaemon | undefined;
    let collector = await collectEvents(first);
    try {
      await pairedSession(first, 'r', '+15551000005', { history: { messages: 5, chats: 1 } });
      const sync = await collector.next(isHistory('r'), 5000, 'history.sync of r');
      assert.equal(sync.payload.messageCount, 5);
      collector.close();
      assert.equal(await first.stop(), 0);
      second = await startDaemon({ dataDir: first.dataDir, env: { GATEWAY_LOG_LEVEL: 'warn' } });
      collector = await collectEvents(second);
      await waitFor(async () => (await second!.request('GET', '/api/sessions/r')).body.data.status === 'CONNECTED', 10_000, 'r restored');
      await marker(second, collector, 'r');
      assert.deepEqual(collector.all(isHistory('r')), []);
      assert.equal((await storedMessages(second, 'r')).filter((m) => m.text?.startsWith('history message ')).length, 5);
    } finally {
      collector.close();
      await second?.kill();
      await first.cleanup();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
