// Event-log replay: a session with 100,000 events (BENCH_EVENT_LOG_EVENTS; a sandbox burst of inbound messages), read
// back by a reader that was away: paged through GET /api/events (1,000 a page), and as a stream resumed from its first
// event (GET /api/events/stream with Last-Event-ID 0). Baseline: the same rows read straight from the daemon's SQLite
// file with better-sqlite3 in this process, the bare cost of reading them in order.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { request } from 'undici';
import type { BenchResult } from './types.js';
import { MASTER_KEY } from '../test/helpers/daemon.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { result, round } from './support/report.js';

const EVENTS = Number(process.env.BENCH_EVENT_LOG_EVENTS ?? 100_000);
const BURST = 50_000;

async function fill(url: string, count: number): Promise<void> {
  for (let left = count; left > 0; left -= BURST) {
    const res = await request(`${url}/api/sandbox/sessions/a/inbound/burst`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ count: Math.min(BURST, left) }),
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const body = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`burst: ${res.statusCode} ${body}`);
  }
}

async function pages(url: string): Promise<number> {
  let read = 0;
  for (let after = 0; ; ) {
    const res = await request(`${url}/api/events?session=a&after=${after}&limit=1000`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
    const body = (await res.body.json()) as { data: { events: unknown[]; nextAfter: number; hasMore: boolean } };
    read += body.data.events.length;
    after = body.data.nextAfter;
    if (!body.data.hasMore) return read;
  }
}

/** reads the resumed stream until `count` events came; returns how many */
async function stream(url: string, count: number): Promise<number> {
  const controller = new AbortController();
  const res = await fetch(`${url}/api/events/stream?session=a`, { headers: { authorization: `Bearer ${MASTER_KEY}`, 'Last-Event-ID': '0' }, signal: controller.signal });
  let seen = 0;
  const decoder = new TextDecoder();
  let tail = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const text = tail + decoder.decode(chunk, { stream: true });
      let at = 0;
      for (;;) {
        const found = text.indexOf('\ndata: ', at);
        if (found < 0) break;
        seen += 1;
        at = found + 7;
      }
      tail = text.slice(Math.max(at, text.length - 7));
      if (seen >= count) break;
    }
  } finally {
    controller.abort();
  }
  return seen;
}

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon();
  try {
    await pairedSession(daemon, 'a', '+15550930001');
    const filled = performance.now();
    await fill(daemon.url, EVENTS);
    process.stdout.write(`event-log: ${EVENTS} messages in ${round((performance.now() - filled) / 1000, 1)} s\n`);

    const bare = new Database(join(daemon.dataDir, 'gateway.db'), { readonly: true });
    let started = performance.now();
    const rows = bare.prepare("SELECT envelope FROM event_log WHERE session = 'a' ORDER BY seq").pluck().all() as string[];
    let parsed = 0;
    for (const row of rows) parsed += (JSON.parse(row) as { seq: number }).seq > 0 ? 1 : 0;
    const bareRate = parsed / ((performance.now() - started) / 1000);
    bare.close();

    started = performance.now();
    const paged = await pages(daemon.url);
    const pagedRate = paged / ((performance.now() - started) / 1000);
    started = performance.now();
    const streamed = await stream(daemon.url, paged);
    const streamedRate = streamed / ((performance.now() - started) / 1000);
    process.stdout.write(`event-log: ${paged} events paged, ${streamed} streamed; bare read ${Math.round(bareRate)} events/s\n`);
    const label = `${paged} events of one session`;
    return [
      result('event-log', `replay of ${label} through GET /api/events (1,000 a page), events/s vs a bare SQLite read of the rows`, Math.round(pagedRate), Math.round(bareRate), 'events/s'),
      result('event-log', `replay of ${label} as a resumed event stream (Last-Event-ID 0), events/s vs a bare SQLite read`, Math.round(streamedRate), Math.round(bareRate), 'events/s'),
    ];
  } finally {
    await daemon.cleanup();
  }
}
