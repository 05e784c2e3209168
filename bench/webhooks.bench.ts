// Webhook delivery: sustained deliveries/s of the real outbox + dispatcher (temp SQLite, every outcome recorded) and
// event→receiver latency at a fixed rate, each next to a bare loop of signed undici Pool.request POSTs to the same receiver.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { BenchResult } from './types.js';
import { durableOutbox, type DurableOutbox } from './support/durable-outbox.js';
import { startChild, type Child } from './support/process.js';
import { BENCH_HMAC_KEY, signedPost } from './support/signed-post.js';
import { percentile, printResults, result, round } from './support/report.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { EventBus } from '../src/events/bus.js';
import { createTickTransaction, openDatabase } from '../src/store/db.js';
import { createOutboxRepo } from '../src/store/outbox.js';
import { createWebhooksRepo } from '../src/store/webhooks.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { createOutbox, envelopeJson } from '../src/webhooks/outbox.js';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import { createGuardedDispatcher } from '../src/net/guarded-dispatcher.js';
import { secretBoxFor } from '../src/auth/secret-box.js';

const N = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 30_000);
const WARMUP = 2_000;
const ROUNDS = 2;
const RATE = 1_000;
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_S ?? 5);
const SETTINGS = {
  ...DEFAULT_CONFIG.webhooks,
  allowPrivateTargets: true,
  ...(process.env.BENCH_PER_WEBHOOK ? { perWebhookConcurrency: Number(process.env.BENCH_PER_WEBHOOK) } : {}),
};
const CONCURRENCY = SETTINGS.concurrency;
/** one webhook never has more than perWebhookConcurrency deliveries in flight: the bare loop keeps as many */
const IN_FLIGHT = Math.min(CONCURRENCY, SETTINGS.perWebhookConcurrency);

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

const epochMs = () => performance.timeOrigin + performance.now();

/** A realistic message.received payload; `t` is the send time the receiver subtracts. */
const payload = (n: number, t = 0) => ({
  t,
  messageId: `3EB0${n.toString(16).padStart(16, '0')}`,
  chatId: '15550900002@s.whatsapp.net',
  from: { jid: '15550900002@s.whatsapp.net', phoneNumber: '+15550900002', lid: '12345678901234@lid' },
  fromMe: false,
  type: 'text',
  text: `benchmark message number ${n}, long enough to look like a real one`,
  timestamp: '2026-01-01T00:00:00.000Z',
  pushName: 'Bench Sender',
});

async function stats(receiver: Child): Promise<{ received: number; latencies: number[] }> {
  const res = await fetch(`http://127.0.0.1:${receiver.port}/stats`);
  return (await res.json()) as { received: number; latencies: number[] };
}

// ---- bare baseline: signed POSTs with undici Pool.request, IN_FLIGHT at a time (what one webhook may have) ----

const bareBody = (n: number, t = 0) =>
  envelopeJson(randomUUID(), { event: 'message.received', session: 'bench', seq: n, timestamp: new Date().toISOString(), payload: payload(n, t) });

async function bareThroughput(pool: Pool, count: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await signedPost(pool, '/bare', bareBody(next++), 'message.received');
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/** Calls `emit(n)` for n = 0 … count − 1, 500 per event-loop tick (so that delivery runs alongside), then `afterTick`. */
function emitInTicks(count: number, emit: (n: number) => void, afterTick: () => void = () => {}): Promise<void> {
  let emitted = 0;
  return new Promise<void>((done) => {
    const step = () => {
      const until = Math.min(count, emitted + 500);
      while (emitted < until) emit(emitted++);
      afterTick();
      if (emitted < count) setImmediate(step);
      else done();
    };
    step();
  });
}

/**
 * The bare loop plus the least a durable outbox writes (DESIGN §4), through the daemon's own repository and schema, with
 * events arriving as the gateway's do (emitInTicks): each delivery's row inserted in the tick's transaction before its
 * POST, each outcome recorded after it (gathered for 10 ms and written in one transaction, as the dispatcher does). No
 * dispatcher, registry, event bus or retry bookkeeping.
 */
async function durableBareThroughput(pool: Pool, count: number, store: DurableOutbox): Promise<number> {
  const queue: Array<{ id: string; body: string }> = [];
  let waiting: Array<() => void> = [];
  let posted = 0;
  const started = performance.now();
  const emitted = emitInTicks(
    count,
    (n) => {
      const id = randomUUID();
      const body = bareBody(n);
      store.record(id, 'message.received', body);
      queue.push({ id, body });
    },
    () => {
      for (const wake of waiting) wake();
      waiting = [];
    },
  );
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (posted < count) {
        const next = queue.shift();
        if (!next) {
          await new Promise<void>((wake) => waiting.push(wake));
          continue;
        }
        posted += 1;
        await signedPost(pool, '/bare', next.body, 'message.received');
        store.succeeded(next.id);
      }
    }),
  );
  await emitted;
  await store.written();
  return count / ((performance.now() - started) / 1000);
}

/** Calls `send(i)` RATE times a second for `seconds`, catching up on late timer ticks. */
async function atFixedRate(seconds: number, send: (i: number) => void): Promise<number> {
  const total = RATE * seconds;
  const started = performance.now();
  let sent = 0;
  await new Promise<void>((done) => {
    const step = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
      while (sent < due) send(sent++);
      if (sent < total) setTimeout(step, 1);
      else done();
    };
    step();
  });
  return total;
}

async function bareLatency(pool: Pool, receiver: Child): Promise<number[]> {
  await stats(receiver);
  const pending: Promise<void>[] = [];
  const total = await atFixedRate(LATENCY_SECONDS, (i) => void pending.push(signedPost(pool, '/bare', bareBody(i, epochMs()), 'message.received', { 'X-Bench': 'latency' })));
  await Promise.all(pending);
  const { latencies } = await stats(receiver);
  if (latencies.length !== total) throw new Error(`bare latency: ${latencies.length} of ${total} arrived`);
  return latencies;
}

// ---- the gateway: outbox + dispatcher in-process on a temporary SQLite store ----

interface Gateway {
  bus: EventBus;
  succeeded(): number;
  recordedSucceeded(): Promise<number>;
  waitForSucceeded(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function startGateway(receiverPort: number, mode: 'throughput' | 'latency'): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const db = openDatabase(join(dir, 'gateway.db'));
  const tick = createTickTransaction(db, (err) => process.stderr.write(`webhooks bench: a tick's writes were lost: ${String(err)}\n`));
  const bus = new EventBus(tick.join);
  const outbox = createOutboxRepo(db);
  const box = secretBoxFor({ masterKey: 'svc_master_bench_0123456789abcdef0123456789' });
  const registry = new WebhookRegistry({ webhooks: createWebhooksRepo(db, box), outbox, urlPolicy: { allowPrivateTargets: true } });
  const http = createGuardedDispatcher({ allowPrivateTargets: true });
  let succeeded = 0;
  const waiters: Array<{ count: number; done: () => void }> = [];
  const dispatcher = new WebhookDispatcher({
    outbox,
    registry,
    box,
    http,
    settings: SETTINGS,
    beginWrite: tick.join,
    onOutcome(outcome) {
      if (outcome.status === 'succeeded') succeeded += 1;
      else if (outcome.status === 'failed') throw new Error(`delivery failed: ${outcome.lastError}`);
      for (const w of [...waiters]) if (succeeded >= w.count) waiters.splice(waiters.indexOf(w), 1) && w.done();
    },
  });
  bus.addPersister(createOutbox({ registry, outbox, box, onWritten: (rows) => dispatcher.notify(rows) }));
  await registry.create({ url: `http://127.0.0.1:${receiverPort}/gateway`, events: ['message.received'], hmacKey: BENCH_HMAC_KEY, headers: [{ name: 'X-Bench', value: mode }] });
  // the enabled webhooks cached before the first event, as the daemon does
  await registry.reload();
  dispatcher.start();
  return {
    bus,
    succeeded: () => succeeded,
    recordedSucceeded: async () => (await db.prepare<number>("SELECT COUNT(*) FROM deliveries WHERE status = 'succeeded'").pluck().get())!,
    waitForSucceeded: (count, timeoutMs = 120_000) =>
      new Promise<void>((done, fail) => {
        if (succeeded >= count) return done();
        const timer = setTimeout(() => fail(new Error(`only ${succeeded} of ${count} deliveries succeeded in time`)), timeoutMs);
        waiters.push({ count, done: () => (clearTimeout(timer), done()) });
      }),
    async close() {
      await dispatcher.stop(5000);
      await http.close();
      tick.flush();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Emits `count` events as fast as the loop allows (in chunks, so delivery runs alongside); returns deliveries/s. */
async function gatewayThroughput(gateway: Gateway, count: number): Promise<number> {
  const target = gateway.succeeded() + count;
  const started = performance.now();
  await emitInTicks(count, (n) => gateway.bus.emit('bench', 'message.received', payload(n)));
  await gateway.waitForSucceeded(target);
  return count / ((performance.now() - started) / 1000);
}

async function gatewayLatency(receiverPort: number, receiver: Child): Promise<number[]> {
  const gateway = await startGateway(receiverPort, 'latency');
  try {
    await stats(receiver);
    const total = await atFixedRate(LATENCY_SECONDS, (i) => void gateway.bus.emit('bench', 'message.received', payload(i, epochMs())));
    await gateway.waitForSucceeded(total);
    return (await stats(receiver)).latencies;
  } finally {
    await gateway.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  const receiver = await startChild('./webhook-receiver.js');
  const pool = new Pool(`http://127.0.0.1:${receiver.port}`, { connections: CONCURRENCY, pipelining: 1 });
  try {
    // (a) the bare loop and (b) the gateway (every event written to the outbox, delivered, its outcome recorded),
    // each warmed up, then in alternating rounds so that drift in the machine's speed does not land on one side
    await bareThroughput(pool, WARMUP);
    const gateway = await startGateway(receiver.port, 'throughput');
    const durable = await durableOutbox((err) => process.stderr.write(`webhooks bench: a tick's writes were lost: ${String(err)}\n`));
    const bareRates: number[] = [];
    const durableRates: number[] = [];
    const gatewayRates: number[] = [];
    try {
      await gatewayThroughput(gateway, WARMUP);
      await durableBareThroughput(pool, WARMUP, durable);
      for (let round = 0; round < ROUNDS; round++) {
        bareRates.push(await bareThroughput(pool, N));
        durableRates.push(await durableBareThroughput(pool, N, durable));
        gatewayRates.push(await gatewayThroughput(gateway, N));
      }
      const recorded = await gateway.recordedSucceeded();
      if (recorded !== ROUNDS * N + WARMUP) throw new Error(`expected ${ROUNDS * N + WARMUP} succeeded rows, found ${recorded}`);
    } finally {
      await gateway.close();
      await durable.close();
    }
    const bareRate = mean(bareRates);
    const durableRate = mean(durableRates);
    const gatewayRate = mean(gatewayRates);

    // (c) latency at a fixed 1,000 events/s: bare POST from the moment of the event, then through the outbox
    const bare = (await bareLatency(pool, receiver)).sort((a, b) => a - b);
    const through = (await gatewayLatency(receiver.port, receiver)).sort((a, b) => a - b);

    const latency = (metric: string, value: number, baseline: number): BenchResult => ({
      ...result('webhooks', metric, value, baseline, 'ms'),
      value: round(value, 2),
      baseline: round(baseline, 2),
    });
    return [
      result('webhooks', `deliveries/s sustained, outcome recorded (${ROUNDS} alternating rounds of ${N}; ${IN_FLIGHT} in flight on both sides, perWebhookConcurrency)`, gatewayRate, bareRate, 'deliveries/s'),
      result('webhooks', `durable bare loop: the bare loop + each delivery's row written before its POST and its outcome recorded (DESIGN §4), same rounds (vs bare loop)`, durableRate, bareRate, 'deliveries/s'),
      result('webhooks', 'deliveries/s sustained, outcome recorded (vs that durable bare loop)', gatewayRate, durableRate, 'deliveries/s'),
      latency(`p50 latency event→receiver at ${RATE}/s (lower is better)`, percentile(through, 50), percentile(bare, 50)),
      latency(`p99 latency event→receiver at ${RATE}/s (lower is better)`, percentile(through, 99), percentile(bare, 99)),
    ];
  } finally {
    await pool.close();
    await receiver.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  printResults(await run());
  process.stdout.write(`(webhooks: ${Math.round((performance.now() - started) / 1000)} s)\n`);
}
