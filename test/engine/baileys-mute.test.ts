// How the Baileys mapper reads a chat's mute end (chats.update and history sync): an unmute carries no end (null or 0)
// and reads as unmuted; -1 (2^64 - 1 in a history sync's unsigned field) is muted for good; a past end is over.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { proto } from '@whiskeysockets/baileys';
import { muteOf } from '../../src/engine/baileys/events.js';

/** the end as a decoded history conversation holds it (an unsigned 64-bit Long) */
const decoded = (value: number) => proto.Conversation.decode(proto.Conversation.encode({ id: 'x@s.whatsapp.net', muteEndTime: value }).finish()).muteEndTime;

test('mute ends as the network gives them', () => {
  const unmuted = { muted: false, muteEndTime: null };
  const forGood = { muted: true, muteEndTime: null };
  assert.deepEqual(muteOf(null), unmuted);
  assert.deepEqual(muteOf(undefined), unmuted);
  assert.deepEqual(muteOf(0), unmuted);
  assert.deepEqual(muteOf(decoded(0)), unmuted);
  assert.deepEqual(muteOf(-1), forGood);
  assert.deepEqual(muteOf(decoded(-1)), forGood);
  const end = Date.now() + 3_600_000;
  assert.deepEqual(muteOf(end), { muted: true, muteEndTime: new Date(end).toISOString() });
  assert.deepEqual(muteOf(decoded(end)), { muted: true, muteEndTime: new Date(end).toISOString() });
  assert.deepEqual(muteOf(Math.floor(end / 1000)), { muted: true, muteEndTime: new Date(Math.floor(end / 1000) * 1000).toISOString() }, 'seconds');
  assert.deepEqual(muteOf(Date.now() - 1000), unmuted, 'a mute that is over');
});
