// The chat list at scale: a session with 10,000 chats and 1,000,000 messages (BENCH_CHATS, BENCH_CHAT_MESSAGES; sandbox
// history syncs of 100,000 messages each), then GET /api/sessions/{session}/chats one request at a time: the first page
// (50 chats), a page deep in the list (after a cursor), and the unread filter. Baseline: GET /api/health on the same
// daemon in the same run (authentication, routing and JSON, without the store). Then search over the messages (a word
// every message has, and two words ten have) and a page of one chat's history. Also printed: the bytes a message costs
// on disk (the database's used pages over the messages stored: the row, its indexes, the chat list, the search index).
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { request } from 'undici';
import type { BenchResult } from './types.js';
import { MASTER_KEY } from '../test/helpers/daemon.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { percentile, result, round } from './support/report.js';

const CHATS = Number(process.env.BENCH_CHATS ?? 10_000);
const MESSAGES = Number(process.env.BENCH_CHAT_MESSAGES ?? 1_000_000);
const SYNC = 100_000;
const PROBES = Number(process.env.BENCH_CHAT_PROBES ?? 400);

async function get(url: string): Promise<{ ms: number; body: any }> {
  const started = performance.now();
  const res = await request(url, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
  const body = await res.body.json();
  const ms = performance.now() - started;
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(body)}`);
  return { ms, body };
}

/** each url asked in turn, PROBES rounds: noise falls on all of them alike; each one's latencies, sorted */
async function latencies(urls: string[]): Promise<number[][]> {
  const all = urls.map(() => [] as number[]);
  for (let i = 0; i < PROBES; i++) for (const [k, url] of urls.entries()) all[k]!.push((await get(url)).ms);
  return all.map((list) => list.sort((a, b) => a - b));
}

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon();
  try {
    await pairedSession(daemon, 'a', '+15550940001');
    const started = performance.now();
    for (let left = MESSAGES; left > 0; left -= SYNC) {
      const res = await request(`${daemon.url}/api/sandbox/sessions/a/history`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: Math.min(SYNC, left), chats: CHATS }),
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`history: ${res.statusCode} ${text}`);
    }
    // the sync's answer comes before the last of its messages are stored: wait until all are
    for (;;) {
      const res = await request(`${daemon.url}/api/sessions/a/messages?limit=1`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
      await res.body.dump();
      if (Number(res.headers['x-total-count']) >= MESSAGES) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    // and indexed for search (the indexer works behind the store)
    const file = new Database(join(daemon.dataDir, 'gateway.db'), { readonly: true });
    const indexed = () => file.prepare('SELECT (SELECT up_to FROM message_search_indexed) >= (SELECT COALESCE(MAX(rowid), 0) FROM message_search)').pluck().get() === 1;
    while (!indexed()) await new Promise((r) => setTimeout(r, 500));
    file.close();
    process.stdout.write(`chats: stored and indexed in ${round((performance.now() - started) / 1000, 1)} s\n`);
    const base = `${daemon.url}/api/sessions/a/chats`;
    const listed = (await get(`${base}?limit=1000`)).body.data;
    process.stdout.write(`chats: ${MESSAGES} messages in ${CHATS} chats synced in ${round((performance.now() - started) / 1000, 1)} s; first page of 1000 has ${listed.chats.length}\n`);
    // a cursor about half way down the list
    let cursor = listed.nextCursor as string;
    for (let i = 0; i < 4 && cursor; i++) cursor = (await get(`${base}?limit=1000&cursor=${encodeURIComponent(cursor)}`)).body.data.nextCursor;

    const search = `${daemon.url}/api/sessions/a/messages/search`;
    const [health, first, deep, unread, common, rare, history] = (await latencies([
      `${daemon.url}/api/health`,
      `${base}?limit=50`,
      `${base}?limit=50&cursor=${encodeURIComponent(cursor)}`,
      `${base}?limit=50&unread=true`,
      `${search}?q=history&limit=20`,
      `${search}?q=history%2012345&limit=20`,
      `${base}/${encodeURIComponent(listed.chats[0].chatId)}/messages?limit=50&before=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`,
    ])) as number[][] as [number[], number[], number[], number[], number[], number[], number[]];

    const db = new Database(join(daemon.dataDir, 'gateway.db'), { readonly: true });
    const stored = db.prepare("SELECT COUNT(*) FROM messages WHERE session = 'a'").pluck().get() as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const used = (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
    db.close();
    const bytesPerMessage = (used * pageSize) / stored;
    process.stdout.write(`chats: ${stored} messages stored, ${round((used * pageSize) / 2 ** 20, 1)} MiB of database, ${Math.round(bytesPerMessage)} bytes a message\n`);
    const label = `${CHATS} chats, ${stored} messages`;
    return [
      result('chats', `GET …/chats (50, first page) p50 ms, ${label}, vs GET /api/health`, round(percentile(first, 50)), round(percentile(health, 50)), 'ms'),
      result('chats', `GET …/chats (50, first page) p99 ms, ${label}, vs GET /api/health`, round(percentile(first, 99)), round(percentile(health, 99)), 'ms'),
      result('chats', `GET …/chats (50 after a cursor 5,000 chats down) p99 ms, ${label}, vs GET /api/health`, round(percentile(deep, 99)), round(percentile(health, 99)), 'ms'),
      result('chats', `GET …/chats?unread=true (50) p99 ms, ${label}, vs GET /api/health`, round(percentile(unread, 99)), round(percentile(health, 99)), 'ms'),
      result('chats', `search of every message for a word all ${stored} have (20 newest) p99 ms vs GET /api/health`, round(percentile(common, 99)), round(percentile(health, 99)), 'ms'),
      result('chats', `search for two words 10 messages have p99 ms, ${stored} messages, vs GET /api/health`, round(percentile(rare, 99)), round(percentile(health, 99)), 'ms'),
      result('chats', `a chat's history (50 before a time) p99 ms, ${label}, vs GET /api/health`, round(percentile(history, 99)), round(percentile(health, 99)), 'ms'),
      result('chats', `bytes a message costs on disk (row, indexes, chat list, search index), ${label}`, Math.round(bytesPerMessage), 0, 'bytes'),
    ];
  } finally {
    await daemon.cleanup();
  }
}
