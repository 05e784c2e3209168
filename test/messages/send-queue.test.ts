// The send queue runner against an in-memory store: entries go in order; one whose message the store already holds
// (sent before a crash) is completed without a send; a session that cannot send keeps its entries; a refusal drops its
// entry and tells its caller; a cancel and the runner never both win.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError, MessageRefusedError } from '../../src/errors.js';
import { EventBus } from '../../src/events/bus.js';
import { createLogger } from '../../src/logger.js';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { Pacer, policyOf } from '../../src/messages/governor.js';
import { SendQueue, type SendQueueDeps } from '../../src/messages/send-queue.js';
import type { QueuedSend, SendQueueRepo } from '../../src/store/send-queue.js';

/** The repository's contract, in memory. */
function memoryRepo(): SendQueueRepo & { rows: Array<QueuedSend & { state: 'queued' | 'sending' }> } {
  const rows: Array<QueuedSend & { state: 'queued' | 'sending' }> = [];
  const waiting = (session: string) => rows.filter((r) => r.session === session).sort((a, b) => a.seq - b.seq);
  const find = (session: string, id: string) => rows.find((r) => r.session === session && r.id === id);
  const remove = (row: QueuedSend | undefined) => row && rows.splice(rows.indexOf(row as (typeof rows)[number]), 1);
  const setState = (session: string, id: string, from: 'queued' | 'sending', to: 'queued' | 'sending') => {
    const row = find(session, id);
    if (row?.state !== from) return false;
    row.state = to;
    return true;
  };
  return {
    rows,
    add: async (entry) => void rows.push({ ...entry, state: 'queued' }),
    recordFirstContact: () => undefined,
    entry: async (session, id) => {
      const row = find(session, id);
      return row && { entry: { ...row, body: '', caller: '' }, sending: row.state === 'sending' };
    },
    head: async (session) => waiting(session).find((r) => r.state === 'queued'),
    page: async (session, limit, offset) => waiting(session).slice(offset, offset + limit),
    totals: async (session) => ({ entries: waiting(session).length, bytes: waiting(session).reduce((n, r) => n + r.bytes, 0) }),
    ahead: async (session, seq) => waiting(session).filter((r) => r.seq < seq).length,
    maxSeq: async (session) => Math.max(0, ...waiting(session).map((r) => r.seq)),
    sessionsWithQueued: async () => [...new Set(rows.map((r) => r.session))],
    cancel: async (session, id) => find(session, id)?.state === 'queued' && Boolean(remove(find(session, id))),
    claim: async (session, id) => setState(session, id, 'queued', 'sending'),
    unclaim: async (session, id) => void setState(session, id, 'sending', 'queued'),
    unclaimAll: async (session) => rows.filter((r) => r.session === session).forEach((r) => (r.state = 'queued')),
    dropClaimed: async (session, id) => void (find(session, id)?.state === 'sending' && remove(find(session, id))),
    completed: (entry) => void remove(find(entry.session, entry.id)),
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
    sendsHere: async () => true,
    ...overrides,
  });
  return { queue, repo, results, bus };
}

test('entries go out in order, under their message ids; the queue refuses past its bound', async () => {
  const sent: string[] = [];
  let full!: () => void;
  const bounded = new Promise<void>((r) => (full = r));
  const { queue, repo } = queueWith(async (entry, recorded) => {
    await bounded;
    sent.push(entry.messageId);
    recorded();
    return { messageId: entry.messageId };
  });
  const held = await Promise.all(['a', 'b', 'c'].map((t) => queue.enqueue(input(t))));
  await assert.rejects(queue.enqueue(input('d')), (err: GatewayError) => err.code === 'SEND_QUEUE_FULL');
  full();
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

test('a cancel that loses to the runner claiming its entry is 409, and the entry has one outcome', async () => {
  let release!: () => void;
  const sent: string[] = [];
  const { queue, repo, results } = queueWith(async (entry, recorded) => {
    sent.push(entry.messageId);
    await new Promise<void>((r) => (release = r));
    recorded();
    return { messageId: entry.messageId };
  });
  // the cancel looks its entry up, then the runner claims it before the cancel's delete
  const cancel = repo.cancel;
  repo.cancel = async (session, id) => {
    while (!sent.length) await new Promise((r) => setTimeout(r, 2));
    return cancel(session, id);
  };
  const { entry } = await queue.enqueue(input('raced', 'cmd-raced'));
  await assert.rejects(queue.cancel('s', entry.id), (err: GatewayError) => err.code === 'QUEUE_ENTRY_SENDING');
  release();
  while (repo.rows.length) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(results.map((r) => [r.commandId, r.success]), [['cmd-raced', true]]);
  assert.equal(queue.hasWaiting('s'), false);
  queue.stop();
});

test('two runners of one queue (two nodes) send each entry once: the store claim decides', async () => {
  const sent: string[] = [];
  const deliver: SendQueueDeps['deliver'] = async (entry, recorded) => {
    sent.push(entry.messageId);
    await new Promise((r) => setTimeout(r, 5));
    recorded();
    return { messageId: entry.messageId };
  };
  const { queue, repo } = queueWith(deliver, { sendsHere: async () => false });
  const other = new SendQueue({ ...queueWith(deliver).queue['deps'], repo, sendsHere: async () => true });
  const held = [];
  for (const text of ['a', 'b', 'c']) held.push(await queue.enqueue(input(text)));
  // both take the session's queue up at once (a claim left by a node that died is freed only when a node takes it up)
  queue['deps'].sendsHere = async () => true;
  await Promise.all([other.start(), queue.start()]);
  while (repo.rows.length) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual([...sent].sort(), held.map((h) => h.entry.messageId).sort());
  queue.stop();
  other.stop();
});

test('concurrent enqueues of a session keep its bound and get distinct places', async () => {
  const { queue, repo } = queueWith(async () => ({ messageId: 'never' }), { sendsHere: async () => false });
  const add = repo.add;
  repo.add = async (entry) => {
    await new Promise((r) => setTimeout(r, 5));
    return add(entry);
  };
  const tries = await Promise.allSettled(['a', 'b', 'c', 'd', 'e'].map((t) => queue.enqueue(input(t, `cmd-${t}`))));
  const accepted = tries.filter((t) => t.status === 'fulfilled');
  assert.equal(accepted.length, 3);
  assert.equal(tries.filter((t) => t.status === 'rejected' && (t.reason as GatewayError).code === 'SEND_QUEUE_FULL').length, 2);
  assert.equal(new Set(repo.rows.map((r) => r.seq)).size, 3);
  queue.stop();
});

test('a session not connected here does no send work; it runs once it connects', async () => {
  let here = false;
  const work: string[] = [];
  const { queue, repo } = queueWith(
    async (entry, recorded) => {
      work.push(`deliver ${entry.messageId}`);
      recorded();
      return { messageId: entry.messageId };
    },
    { sendsHere: async () => here, sentBefore: async (entry) => void work.push(`sentBefore ${entry.messageId}`) },
  );
  const bus = queue['deps'].bus;
  await queue.start();
  await queue.enqueue(input('later', 'cmd-later'));
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(work, []);
  assert.equal(repo.rows.length, 1);
  here = true;
  bus.emit('s', 'session.connected', {} as never);
  while (repo.rows.length) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(work, [`sentBefore ${input('later').messageId}`, `deliver ${input('later').messageId}`]);
  queue.stop();
});

test('a first contact WhatsApp refused keeps counting; one that failed before it went out does not', async () => {
  const dropped: string[] = [];
  const { queue, repo } = queueWith(
    async (entry, recorded) => {
      const { text } = JSON.parse(entry.body) as { text: string };
      if (text === 'bad') throw new GatewayError('MEDIA_DOWNLOAD_FAILED', 'gone');
      recorded();
      throw new MessageRefusedError(entry.messageId, { reason: 'rate_limited', code: '463' });
    },
    { dropped: (entry) => dropped.push(entry.messageId) },
  );
  await queue.enqueue({ ...input('refused', 'cmd-refused'), firstContact: true });
  await queue.enqueue({ ...input('bad', 'cmd-bad'), firstContact: true });
  while (repo.rows.length) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(dropped, [input('bad').messageId]);
  queue.stop();
});

test('a session that connects while the store cannot answer has its queue read again, and sent, once it can', async () => {
  const sent: string[] = [];
  let connectedHere = false;
  const { queue, repo, bus } = queueWith(async (entry, recorded) => {
    sent.push(entry.messageId);
    recorded();
    return { messageId: entry.messageId };
  }, { sendsHere: async () => connectedHere });
  const entry = { ...input('left'), id: 'e1', seq: 1, queuedAt: Date.now() };
  await repo.add(entry);
  await queue.start();
  // the session connects here while PostgreSQL restarts: the read fails (no unhandled rejection), and is made again
  const totals = repo.totals;
  let failures = 0;
  repo.totals = async (session) => {
    if (failures++ < 2) throw new Error('PostgreSQL is unreachable');
    return totals(session);
  };
  connectedHere = true;
  bus.emit('s', 'session.connected', { phoneNumber: '+15550000009' });
  const deadline = Date.now() + 5000;
  while (sent.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(sent, [entry.messageId]);
  assert.equal(failures, 3);
  queue.stop();
});
