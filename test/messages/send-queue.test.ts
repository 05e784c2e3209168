// The send queue runner against an in-memory store: entries go in order; one whose message the store already holds
// (sent before a crash) is completed without a send; a session that cannot send keeps its entries; a refusal drops its
// entry and tells its caller; a cancel and the runner never both win.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import { EventBus } from '../../src/events/bus.js';
import { createLogger } from '../../src/logger.js';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { Pacer, policyOf } from '../../src/messages/governor.js';
import { SendQueue, type SendQueueDeps } from '../../src/messages/send-queue.js';
import type { QueuedSend, SendQueueRepo } from '../../src/store/send-queue.js';

/** The repository's contract, in memory. */
function memoryRepo(): SendQueueRepo & { rows: QueuedSend[] } {
  const rows: QueuedSend[] = [];
  const queued = (session: string) => rows.filter((r) => r.session === session).sort((a, b) => a.seq - b.seq);
  return {
    rows,
    add: async (entry) => void rows.push(entry),
    recordFirstContact: () => undefined,
    queued: async (session) => queued(session),
    head: async (session) => queued(session)[0],
    page: async (session, limit, offset) => queued(session).slice(offset, offset + limit),
    totals: async (session) => ({ entries: queued(session).length, bytes: queued(session).reduce((n, r) => n + r.bytes, 0) }),
    ahead: async (session, seq) => queued(session).filter((r) => r.seq < seq).length,
    maxSeq: async (session) => Math.max(0, ...queued(session).map((r) => r.seq)),
    sessionsWithQueued: async () => [...new Set(rows.map((r) => r.session))],
    cancel: async (session, id) => {
      const at = rows.findIndex((r) => r.session === session && r.id === id);
      if (at < 0) return false;
      rows.splice(at, 1);
      return true;
    },
    completed: (entry) => void rows.splice(rows.findIndex((r) => r.id === entry.id), 1),
    firstContactsSince: async () => [],
    pruneSent: async () => 0,
  };
}

const input = (text: string, commandId: string | null = null) => ({
  session: 's',
  messageId: `3EB0${text.toUpperCase().padEnd(20, '0')}`,
  chatId: '15550000001@s.whatsapp.net',
  type: 'text',
  firstContact: false,
  commandId,
  body: JSON.stringify({ text }),
  caller: '{"client":false}',
  bytes: 10,
});

function queueWith(deliver: SendQueueDeps['deliver'], overrides: Partial<SendQueueDeps> = {}) {
  const repo = memoryRepo();
  const bus = new EventBus();
  const results: Array<Record<string, unknown>> = [];
  bus.subscribe((e) => e.event === 'command.result' && results.push(e.payload));
  const queue = new SendQueue({
    repo,
    committed: () => undefined,
    deliver,
    sentBefore: async () => undefined,
    policy: async () => policyOf({ ...DEFAULT_CONFIG.governor, perMinute: 600_000, burst: 1000, recipientGapSeconds: 0 }, {}),
    pacer: new Pacer(),
    bus,
    logger: createLogger('silent'),
    limits: { maxEntries: 3, maxBytes: 1000 },
    retryMs: 20,
    ...overrides,
  });
  return { queue, repo, results };
}

test('entries go out in order, under their message ids; the queue refuses past its bound', async () => {
  const sent: string[] = [];
  const { queue, repo } = queueWith(async (entry, recorded) => {
    sent.push(entry.messageId);
    recorded();
    return { messageId: entry.messageId };
  });
  const held = await Promise.all(['a', 'b', 'c'].map((t) => queue.enqueue(input(t))));
  await assert.rejects(queue.enqueue(input('d')), (err: GatewayError) => err.code === 'SEND_QUEUE_FULL');
  assert.deepEqual(await Promise.all(held.map((h) => h.outcome)), held.map((h) => ({ messageId: h.entry.messageId })));
  assert.deepEqual(sent, held.map((h) => h.entry.messageId));
  assert.equal(repo.rows.length, 0);
});

test('an entry whose message is stored already is completed, not sent again', async () => {
  const sent: string[] = [];
  const { queue, repo, results } = queueWith(
    async (entry) => {
      sent.push(entry.messageId);
      return { messageId: entry.messageId };
    },
    { sentBefore: async (entry) => ({ messageId: entry.messageId, status: 'sent' }) },
  );
  await queue.enqueue(input('crashed', 'cmd-1'));
  while (repo.rows.length) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(sent, []);
  assert.deepEqual(results, [{ commandId: 'cmd-1', success: true, result: { messageId: input('crashed').messageId, status: 'sent' } }]);
});

test('a session that cannot send keeps its entries; a refusal drops its entry and is its outcome', async () => {
  let connected = false;
  const { queue, repo, results } = queueWith(async (entry, recorded) => {
    if (!connected) throw new GatewayError('SESSION_NOT_CONNECTED', 'not connected');
    if (JSON.parse(entry.body).text === 'bad') throw new GatewayError('MEDIA_DOWNLOAD_FAILED', 'gone');
    recorded();
    return { messageId: entry.messageId };
  });
  await queue.enqueue(input('bad', 'cmd-bad'));
  await queue.enqueue(input('good', 'cmd-good'));
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(repo.rows.length, 2, 'kept while the session cannot send');
  connected = true;
  while (repo.rows.length) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(results.map((r) => [r.commandId, r.success]), [['cmd-bad', false], ['cmd-good', true]]);
  assert.equal((results[0]!.error as { code: string }).code, 'MEDIA_DOWNLOAD_FAILED');
});

test('a cancel and the runner never both win: a send being sent is not cancelled, a cancelled one is not sent', async () => {
  let release!: () => void;
  const sent: string[] = [];
  const { queue } = queueWith(async (entry, recorded) => {
    sent.push(entry.messageId);
    await new Promise<void>((r) => (release = r));
    recorded();
    return { messageId: entry.messageId };
  });
  const first = await queue.enqueue(input('first'));
  const second = await queue.enqueue(input('second'));
  while (!sent.length) await new Promise((r) => setTimeout(r, 5));
  await assert.rejects(queue.cancel('s', first.entry.id), (err: GatewayError) => err.code === 'QUEUE_ENTRY_SENDING');
  await queue.cancel('s', second.entry.id);
  await assert.rejects(second.outcome!, (err: GatewayError) => err.code === 'SEND_CANCELLED');
  release();
  await first.outcome;
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(sent, [first.entry.messageId]);
  queue.stop();
});
