// Inbound burst: 100,000 sandbox messages ingested, stored and turned into events (a stream of single messages, and one
// history sync of that size), against a bare baseline of the same rows written to SQLite in batched transactions.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './types.js';
import { benchDaemon, heapUsedOf, pairedSession, rssOf, type TestDaemon } from './support/gateway.js';
import { result } from './support/report.js';

const COUNT = Number(process.env.BENCH_INBOUND_COUNT ?? 100_000);

/** Bare baseline: the same message rows inserted with one prepared statement, 1,000 per transaction. */
function bareInsertRate(count: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bare-'));
  const db = new Database(join(dir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE m (session TEXT, chat_id TEXT, id TEXT, sender TEXT, type TEXT, text TEXT, timestamp INTEGER, PRIMARY KEY (session, chat_id, id)) WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO m VALUES (?, ?, ?, ?, ?, ?, ?)');
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1) insert.run('a', `1555099${i % 100}@s.whatsapp.net`, `ID${i}`, 'x', 'text', `burst message ${i}`, Date.now());
  });
  const started = performance.now();
  for (let i = 0; i < count; i += 1000) batch(i, Math.min(count, i + 1000));
  const rate = count / ((performance.now() - started) / 1000);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

async function sampleRss(daemon: TestDaemon, during: Promise<unknown>): Promise<number> {
  let peak = await rssOf(daemon);
  let done = false;
  void during.finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, await rssOf(daemon).catch(() => peak));
    await new Promise((r) => setTimeout(r, 50));
  }
  return Math.max(peak, await rssOf(daemon));
}

async function measure(kind: 'stream' | 'history', count: number) {
  const daemon = await benchDaemon();
  try {
    await pairedSession(daemon, 'a', '+15550910001');
    const before = await rssOf(daemon);
    const started = performance.now();
    const call =
      kind === 'stream'
        ? daemon.request('POST', '/api/sandbox/sessions/a/inbound/burst', { count })
        : daemon.request('POST', '/api/sandbox/sessions/a/history', { messages: count });
    const peak = await sampleRss(daemon, call);
    const res = await call;
    if (res.status !== 200) throw new Error(`${kind} burst: ${res.status} ${JSON.stringify(res.body)}`);
    const seconds = (performance.now() - started) / 1000;
    return { rate: count / seconds, growthMb: (peak - before) / 1024 / 1024 };
  } finally {
    await daemon.cleanup();
  }
}

/** An old-space cap that makes V8 collect rather than grow its heap, so memory kept per message would show. */
const HEAP_CAP_MB = 72;

/**
 * RSS and JS heap in use, settled after the first burst and after the last, in one daemon whose old space is capped:
 * equal when nothing is retained per message.
 */
async function repeatedBursts(count: number, times: number) {
  const daemon = await benchDaemon({ env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MB}` } });
  const settled = async () => {
    await new Promise((r) => setTimeout(r, 1000));
    return { rssMb: (await rssOf(daemon)) / 1024 / 1024, heapMb: (await heapUsedOf(daemon)) / 1024 / 1024 };
  };
  try {
    await pairedSession(daemon, 'a', '+15550910001');
    let first = { rssMb: 0, heapMb: 0 };
    let last = first;
    for (let i = 0; i < times; i += 1) {
      const res = await daemon.request('POST', '/api/sandbox/sessions/a/inbound/burst', { count });
      if (res.status !== 200) throw new Error(`burst ${i + 1}: ${res.status} ${JSON.stringify(res.body)}`);
      last = await settled();
      if (i === 0) first = last;
    }
    return { first, last };
  } finally {
    await daemon.cleanup();
  }
}

export async function run(): Promise<BenchResult[]> {
  const baseline = bareInsertRate(COUNT);
  const stream = await measure('stream', COUNT);
  const history = await measure('history', COUNT);
  const small = await measure('stream', COUNT / 10);
  const repeated = await repeatedBursts(COUNT, 4);
  return [
    result('inbound', `stream of ${COUNT} single messages: messages/s vs bare SQLite inserts`, stream.rate, baseline, 'msg/s'),
    result('inbound', `history sync of ${COUNT} messages: messages/s vs bare SQLite inserts`, history.rate, baseline, 'msg/s'),
    result('inbound', `peak RSS growth MB, ${COUNT} vs ${COUNT / 10} messages (flat is good)`, stream.growthMb, small.growthMb, 'MB'),
    result('inbound', `peak RSS growth MB, history sync of ${COUNT}`, history.growthMb, small.growthMb, 'MB'),
    result('inbound', `RSS MB after 4 bursts of ${COUNT} in one daemon (old space capped at ${HEAP_CAP_MB} MB) vs after the first (1.0 = nothing retained)`, repeated.last.rssMb, repeated.first.rssMb, 'MB'),
    result('inbound', `JS heap in use MB after 4 bursts of ${COUNT} (same daemon) vs after the first (1.0 = nothing retained)`, repeated.last.heapMb, repeated.first.heapMb, 'MB'),
  ];
}
