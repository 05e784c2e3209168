// The event schemas: one per catalogue type, valid draft 2020-12, and strict enough to catch a drifting payload.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_TYPES } from '../../src/events/catalogue.js';
import { eventPayloadSchemas } from '../../src/events/schemas.js';
import { assertEvent, eventDrift } from '../helpers/event-contract.js';

const envelope = (event: string, payload: unknown) => ({ id: 'd1', event, session: 'shop', seq: 1, timestamp: '2026-11-22T10:00:00.000Z', payload });
const at = '2026-11-22T10:00:00.000Z';
const alice = { jid: '5511999990001@s.whatsapp.net', phoneNumber: '+5511999990001', lid: '100000000001@lid' };

describe('event schemas', () => {
  it('has one payload schema per catalogue type and no other', () => {
    assert.deepEqual(Object.keys(eventPayloadSchemas).sort(), [...EVENT_TYPES].sort());
  });

  it('accepts the payloads docs/EVENTS.md describes', () => {
    const samples: Array<[string, unknown]> = [
      ['message.received', { messageId: 'M1', chatId: alice.jid, from: alice, fromMe: false, isGroup: false, type: 'text', timestamp: at, text: 'hi' }],
      ['message.sent', { messageId: 'M2', chatId: alice.jid, from: alice, fromMe: true, isGroup: false, type: 'image', timestamp: at, mediaId: 'med_1', mimeType: 'image/png', status: 'sent' }],
      ['message.ack', { messageId: 'M2', chatId: alice.jid, status: 'read', by: alice, timestamp: at }],
      ['message.reaction', { messageId: 'M2', chatId: alice.jid, from: alice, fromMe: false, reaction: '', timestamp: at }],
      ['message.vote', { pollMessageId: 'P1', chatId: alice.jid, voter: alice, selectedOptions: ['a'], timestamp: at }],
      ['session.status', { status: 'CONNECTING', statusReason: 'SCAN_QR', previousStatus: 'DISCONNECTED', previousStatusReason: null }],
      ['session.status', { status: 'CONNECTING', statusReason: 'AUTO_RECONNECT', previousStatus: 'CONNECTED', previousStatusReason: null, lastError: { code: 'NETWORK_REFUSED', message: 'connect ECONNREFUSED (408)', at } }],
      ['session.connected', { phoneNumber: '+5511999990002', pushName: 'Shop', platform: 'smba', lid: '100000000002@lid' }],
      ['session.logged_out', { reason: 'UNLINKED', detail: 'removed on the phone' }],
      ['group.participant', { id: '120363000000000001@g.us', action: 'add', joined: [alice.jid], left: [], promoted: [], demoted: [], participants: [alice], by: alice }],
      ['presence.update', { from: alice, presence: 'recording', state: 'composing', unavailable: false, media: 'audio' }],
      ['call.received', { callId: 'C1', from: alice, chatId: alice.jid, isVideo: true, isGroup: false, status: 'ringing', offeredAt: at, offline: true, timestamp: at }],
      ['call.missed', { callId: 'C1', from: alice, chatId: alice.jid, isVideo: false, isGroup: false, status: 'missed', endedBy: 'caller', offeredAt: at, timestamp: at }],
      ['call.rejected', { callId: 'C1', from: alice, chatId: alice.jid, isVideo: false, isGroup: false, status: 'rejected', endedBy: 'auto', offeredAt: at, timestamp: at }],
      ['call.accepted', { callId: 'C1', from: alice, chatId: alice.jid, isVideo: false, isGroup: false, status: 'accepted', offeredAt: at, timestamp: at }],
      ['contact.update', { id: alice.jid, phoneNumber: alice.phoneNumber, lid: alice.lid, name: null, savedName: 'Alice', businessName: null, pictureUrl: null }],
      ['chat.mute', { chatId: alice.jid, muted: true, muteEndTime: at, timestamp: at }],
      ['labels.update', { action: 'created', label: { id: '1', name: 'VIP', color: 3 } }],
      ['labels.update', { action: 'unassigned', labelId: '1', chatId: alice.jid }],
      ['newsletter.update', { id: '120363000000000009@newsletter', action: 'followed', name: 'News' }],
      ['history.sync', { syncType: 'FULL', chunk: 1, progress: 100, messageCount: 3, chatCount: 1 }],
      ['command.result', { commandId: 'cmd1', success: true, result: { messageId: 'M3', status: 'sent', timestamp: at, chatId: alice.jid } }],
      ['command.result', { commandId: 'cmd1', success: false, error: { code: 'SESSION_NOT_CONNECTED', message: 'not connected' } }],
    ];
    for (const [event, payload] of samples) assertEvent(envelope(event, payload), event);
  });

  it('rejects drift: a missing field, an unknown field, a wrong type, an unknown event', () => {
    const ok = { chatId: alice.jid, archived: true, timestamp: at };
    assert.equal(eventDrift(envelope('chat.archive', ok)), undefined);
    assert.match(eventDrift(envelope('chat.archive', { chatId: alice.jid, timestamp: at })) ?? '', /archived/);
    assert.match(eventDrift(envelope('chat.archive', { ...ok, extra: 1 })) ?? '', /additional/);
    assert.match(eventDrift(envelope('chat.archive', { ...ok, archived: 'yes' })) ?? '', /boolean/);
    assert.match(eventDrift(envelope('chat.archived', ok)) ?? '', /event/);
    assert.match(eventDrift({ ...envelope('chat.archive', ok), extra: true }) ?? '', /additional/);
    // the engine's private fields never reach applications
    const received = { messageId: 'M1', chatId: alice.jid, from: alice, fromMe: false, isGroup: false, type: 'text', timestamp: at, text: 'hi' };
    assert.match(eventDrift(envelope('message.received', { ...received, raw: {} })) ?? '', /additional/);
    assert.match(eventDrift(envelope('message.sent', received)) ?? '', /status/);
    assert.match(eventDrift(envelope('labels.update', { action: 'saved', label: { id: '1', name: 'VIP', color: 3 } })) ?? '', /oneOf|enum|const/);
  });
});
