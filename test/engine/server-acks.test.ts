// The server-ack tracker both engines share: what a send answers, and which events follow, for an ack, a refusal or
// none, whether it comes before the send waits, while it waits, after it answered, or after the timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureOfCode, ServerAcks } from '../../src/engine/server-acks.js';

function tracker(timing = { waitMs: 200, timeoutMs: 60_000 }) {
  const reported: Array<{ type: string; payload: Record<string, unknown> }> = [];
  const acks = new ServerAcks(timing, (type, payload) => reported.push({ type, payload }));
  const next = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const check = () => (reported.length >= count ? resolve() : Date.now() - started > 5000 ? reject(new Error(`${count} reports expected, got ${reported.length}`)) : setTimeout(check, 5));
      check();
    });
  return { acks, reported, next };
}

test('the error codes WhatsApp answers map to reasons; any other is refused with its code', () => {
  assert.deepEqual(['429', '463', '404', '479', '403', '500'].map((code) => failureOfCode(code).reason), ['rate_limited', 'reachout_timelocked', 'not_on_whatsapp', 'recipient_unreachable', 'recipient_unreachable', 'refused']);
  assert.equal(failureOfCode('500').code, '500');
  assert.deepEqual(failureOfCode('<b>\u0000'), { reason: 'refused', detail: 'error "<b>\\u0000"' }, 'not a number: words, not a code');
});

test('an answer within the wait, or before it, is the send\'s status, and no event', async () => {
  const { acks, reported } = tracker();
  acks.expect('A', 'chat');
  setTimeout(() => acks.answer('A'), 5);
  assert.deepEqual(await acks.outcome('A'), { status: 'sent' });
  acks.expect('B', 'chat');
  acks.answer('B', '463');
  assert.deepEqual(await acks.outcome('B'), { status: 'failed', failure: { reason: 'reachout_timelocked', code: '463' } });
  acks.answer('C');
  assert.deepEqual(await acks.outcome('C'), { status: 'pending' }, 'an id never expected is not the tracker\'s');
  assert.deepEqual(reported, []);
});

test('an answer after the wait is an event under the chat the send settled on', async () => {
  const { acks, reported, next } = tracker({ waitMs: 10, timeoutMs: 60_000 });
  acks.expect('A', 'lid-chat');
  acks.rename('A', 'pn-chat');
  assert.deepEqual(await acks.outcome('A'), { status: 'pending' });
  acks.answer('A', '429');
  await next(1);
  assert.equal(reported[0]!.type, 'message.failed');
  assert.deepEqual({ ...reported[0]!.payload, timestamp: undefined }, { messageId: 'A', chatId: 'pn-chat', reason: 'rate_limited', code: '429', timestamp: undefined });
});

test('no answer within the timeout fails the message; a late ack still moves it on, once', async () => {
  const { acks, reported, next } = tracker({ waitMs: 10, timeoutMs: 50 });
  acks.expect('A', 'chat');
  assert.deepEqual(await acks.outcome('A'), { status: 'pending' });
  await next(1);
  assert.equal(reported[0]!.type, 'message.failed');
  assert.equal(reported[0]!.payload.reason, 'timeout');
  assert.equal(reported[0]!.payload.code, undefined);
  acks.answer('A');
  acks.answer('A');
  await next(2);
  assert.deepEqual([reported[1]!.type, reported[1]!.payload.status, reported[1]!.payload.chatId], ['message.ack', 'sent', 'chat']);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(reported.length, 2, 'the second ack of the same message is nothing new');
});

test('a send that never left expects nothing', async () => {
  const { acks, reported } = tracker({ waitMs: 10, timeoutMs: 20 });
  acks.expect('A', 'chat');
  acks.forget('A');
  acks.answer('A');
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.deepEqual(reported, []);
});

test('a message sent again under its id starts afresh: the first attempt\'s timeout does not fail the second', async () => {
  const { acks, reported, next } = tracker({ waitMs: 10, timeoutMs: 60 });
  acks.expect('A', 'chat');
  assert.deepEqual(await acks.outcome('A'), { status: 'pending' });
  acks.expect('A', 'chat');
  const second = acks.outcome('A');
  setTimeout(() => acks.answer('A'), 30);
  assert.deepEqual(await second, { status: 'pending' });
  await next(1);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepEqual(reported.map((r) => [r.type, r.payload.status ?? r.payload.reason]), [['message.ack', 'sent']]);
});
