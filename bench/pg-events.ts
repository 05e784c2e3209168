// `node dist/bench/pg-events.js`: how a node's events reach the others' live streams through PostgreSQL (issue 22): the
// NOTIFY relay the gateway uses (src/cluster/event-relay.ts) against a table tail (each event a row, polled every 10 ms,
// the other design the issue names), on one throwaway server (test/helpers/postgres.ts). Latency from publish to
// arrival at 1,000 events/s for 3 s (p50, p99), and events/s when published as fast as 16 in flight allow, until the
// last one arrived, and how many never arrived (a tail that reads rows past the highest sequence number it saw skips a
// row whose sequence number was taken earlier but committed later, when publishers write at once). Standalone (not in
// `npm run bench`): it informs the choice, it is not a tracked row.
import { createAssembler, encodeMessage, type RelayMessage } from '../src/cluster/event-relay.js';
import { connectPostgres, type PgSql } from '../src/store/postgres.js';
import { startPostgres } from '../test/helpers/postgres.js';

const RATE = 1000;
const SECONDS = 3;
const BURST = 20_000;
const POLL_MS = 10;

interface Transport {
  publish(event: { n: number; t: number }): Promise<void>;
  close(): Promise<void>;
}

type Arrival = (event: { n: number; t: number }) => void;

async function notifyTransport(url: string, onArrival: Arrival): Promise<Transport> {
  const [publisher, listener] = [connectPostgres(url, { max: 4 }), connectPostgres(url, { max: 1 })];
  // as the daemon does: a message's parts go out in one transaction, and are joined on arrival
  const assemble = createAssembler('b', (message: RelayMessage) => message.kind === 'event' && onArrival(message.event as { n: number; t: number }));
  const listening = await listener.listen('gateway_events', assemble);
  return {
    publish: async (event) => {
      const notices = encodeMessage('a', { kind: 'event', event });
      await publisher.begin((tx) => notices.map((notice) => tx`SELECT pg_notify('gateway_events', ${notice})`));
    },
    async close() {
      await listening.unlisten();
      await Promise.all([publisher.end({ timeout: 1 }), listener.end({ timeout: 1 })]);
    },
  };
}

async function tableTransport(url: string, onArrival: Arrival): Promise<Transport> {
  const [publisher, reader] = [connectPostgres(url, { max: 4 }), connectPostgres(url, { max: 1 })];
  await publisher`CREATE TABLE IF NOT EXISTS events_tail (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, node TEXT NOT NULL, body TEXT NOT NULL)`;
  let last = Number((await reader<Array<{ seq: number }>>`SELECT COALESCE(MAX(seq), 0) AS seq FROM events_tail`)[0]!.seq);
  let open = true;
  const poll = async (): Promise<void> => {
    while (open) {
      const rows = await reader<Array<{ seq: number; body: string }>>`SELECT seq, body FROM events_tail WHERE seq > ${last} AND node <> 'b' ORDER BY seq`;
      for (const row of rows) {
        last = row.seq;
        onArrival(JSON.parse(row.body) as { n: number; t: number });
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  const polling = poll();
  return {
    publish: async (event) => void (await publisher`INSERT INTO events_tail (node, body) VALUES ('a', ${JSON.stringify(event)})`),
    async close() {
      open = false;
      await polling;
      await Promise.all([publisher.end({ timeout: 1 }), reader.end({ timeout: 1 })]);
    },
  };
}

/** Waits until every event arrived, or none did for 2 s; how many never arrived. */
async function missing(arrived: () => number, total: number): Promise<number> {
  let seen = arrived();
  let still = performance.now();
  while (arrived() < total && performance.now() - still < 2_000) {
    await new Promise((r) => setTimeout(r, 2));
    if (arrived() !== seen) [seen, still] = [arrived(), performance.now()];
  }
  return total - arrived();
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function measure(name: string, make: (url: string, onArrival: Arrival) => Promise<Transport>, url: string) {
  const latencies: number[] = [];
  let arrived = 0;
  const transport = await make(url, (event) => {
    arrived += 1;
    if (event.t > 0) latencies.push(performance.now() - event.t);
  });
  try {
    const total = RATE * SECONDS;
    const started = performance.now();
    const pending: Array<Promise<void>> = [];
    for (let n = 0; n < total; n++) {
      const due = started + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(transport.publish({ n, t: performance.now() }));
    }
    await Promise.all(pending);
    let lost = await missing(() => arrived, total);
    latencies.sort((x, y) => x - y);
    arrived = 0;
    const burstStarted = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < BURST) await transport.publish({ n: next++, t: 0 });
    }));
    const burstLost = await missing(() => arrived, BURST);
    lost += burstLost;
    const perSecond = (BURST - burstLost) / ((performance.now() - burstStarted - (burstLost ? 2_000 : 0)) / 1000);
    process.stdout.write(`${name.padEnd(22)} ${percentile(latencies, 50).toFixed(2).padStart(8)} ${percentile(latencies, 99).toFixed(2).padStart(8)} ${Math.round(perSecond).toString().padStart(10)} ${String(lost).padStart(6)}\n`);
  } finally {
    await transport.close();
  }
}

const server = await startPostgres();
try {
  process.stdout.write(`${process.version}, PostgreSQL on loopback (fsync off); latency at ${RATE}/s for ${SECONDS} s, then ${BURST} events with 16 in flight\n`);
  process.stdout.write('transport              p50 ms   p99 ms   events/s  never arrived\n');
  // each transport on a database of its own, twice, alternating
  for (let round = 0; round < 2; round++) {
    await measure('NOTIFY relay', notifyTransport, server.createDatabase(`notify_${round}`));
    await measure(`table tail (${POLL_MS} ms poll)`, tableTransport, server.createDatabase(`tail_${round}`));
  }
} finally {
  server.stop();
}
