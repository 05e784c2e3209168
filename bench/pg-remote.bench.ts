// One daemon on PostgreSQL with its database "on another host" (issue 29): a TCP relay between the node and the server
// holds every chunk the node sends for 0, 1, 5 or 20 ms. Reported against a daemon on SQLite under the same load in the
// same run: sends/s answered; each delay's sends/s against the no-delay figure; a route that never touches the store
// (GET /api/nope, 404) answered while sends run at 5 ms; the round trips one send, one inbound message and one webhook
// attempt make; the CPU a send costs (daemon and PostgreSQL together); and a history sync of 50,000 messages, its time
// and the longest stall of the daemon's event loop meanwhile, on both stores.
import autocannon from 'autocannon';
import type { BenchResult } from './types.js';
import { benchDaemon, pairedSession, type TestDaemon } from './support/gateway.js';
import { startChild, type Child } from './support/process.js';
import { cpuMicros, postgresCpuMicros } from './support/cpu.js';
import { result } from './support/report.js';
import { startPostgres, tcpRelay, type TcpRelay, type TestPostgres } from '../test/helpers/postgres.js';

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const DELAYS_MS = [1, 5, 20];
const HISTORY_MESSAGES = 50_000;
const ROUND_TRIP_SAMPLES = 9;

const sendBody = (session: string) => JSON.stringify({ session, chatId: '+15550009999', type: 'text', text: 'bench' });

async function received(receiver: Child): Promise<number> {
  return ((await (await fetch(`http://127.0.0.1:${receiver.port}/count`)).json()) as { received: number }).received;
}


/** Sends for DURATION_S on CONNECTIONS connections; at most `rate` a second in all when given. */
async function sends(daemon: TestDaemon, sessions: string[], rate?: number): Promise<{ rps: number; answered: number }> {
  const durationS = DURATION_S;
  const out = await autocannon({
    url: `${daemon.url}/api/messages/send`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: durationS,
    ...(rate ? { overallRate: rate } : {}),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.masterKey}` },
    requests: sessions.map((session) => ({ body: sendBody(session) })),
  });
  if (out.non2xx > 0) throw new Error(`pg-remote bench: ${out.non2xx} sends were not answered 2xx`);
  return { rps: out['2xx'] / durationS, answered: out['2xx'] };
}

/** A daemon with a webhook to the receiver and two paired sandbox sessions. */
async function prepared(env: Record<string, string>, receiver: Child, tag: string): Promise<{ daemon: TestDaemon; sessions: string[] }> {
  const daemon = await benchDaemon({ env });
  await daemon.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.sent', 'message.received'] });
  const sessions = [`${tag}a`, `${tag}b`];
  for (const [i, name] of sessions.entries()) await pairedSession(daemon, name, `+1555300${tag.length}${String(i).padStart(3, '0')}`);
  return { daemon, sessions };
}

async function lagMaxMs(daemon: TestDaemon): Promise<number> {
  const text = (await daemon.request('GET', '/metrics')).body as string;
  return 1000 * Number(/^gateway_nodejs_eventloop_lag_max_seconds (\S+)/m.exec(text)?.[1] ?? NaN);
}

/** A history sync of HISTORY_MESSAGES on the daemon's first session: its time, and the longest event-loop stall meanwhile (ms). */
async function history(daemon: TestDaemon, session: string): Promise<{ ms: number; stallMs: number; status: number }> {
  // a sync of 10 first: the route's validator is compiled on its first request, a one-time cost that is not the sync's
  await daemon.request('POST', `/api/sandbox/sessions/${session}/history`, { messages: 10, chats: 1 });
  await lagMaxMs(daemon); // a scrape starts the next window of the lag's maximum
  const started = performance.now();
  const answer = await daemon.request('POST', `/api/sandbox/sessions/${session}/history`, { messages: HISTORY_MESSAGES, chats: 100 });
  const ms = performance.now() - started;
  return { ms, stallMs: await lagMaxMs(daemon), status: answer.status };
}

/**
 * The median round trips the relay saw for one `act` until its answer, and after it until its webhook POST arrived and
 * the daemon fell quiet (the delivery's claim and outcome, the sandbox's acks); one unmeasured run first.
 */
async function roundTrips(relay: TcpRelay, receiver: Child, act: () => Promise<unknown>): Promise<{ request: number; after: number }> {
  await act();
  const runs: Array<{ request: number; after: number }> = [];
  for (let i = 0; i < ROUND_TRIP_SAMPLES; i++) {
    await waitForDeliveries(receiver, 0);
    const start = relay.turns();
    await act();
    const answered = relay.turns();
    await waitForDeliveries(receiver, 0);
    runs.push({ request: answered - start, after: relay.turns() - answered });
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return { request: median(runs.map((r) => r.request)), after: median(runs.map((r) => r.after)) };
}

/** GET /api/nope (a 404 that touches no store) one request at a time on 4 connections, while sends run (at `rate`/s, or as many as answered) */
async function floorWhileSending(daemon: TestDaemon, sessions: string[], rate?: number): Promise<{ p50: number; p99: number }> {
  const [, floor] = await Promise.all([sends(daemon, sessions, rate), autocannon({ url: `${daemon.url}/api/nope`, connections: 4, duration: DURATION_S - 1 })]);
  return { p50: floor.latency.p50, p99: floor.latency.p99 };
}

/** sends a second that both stores answer with room to spare here: the route's latency is then the store's doing, not the cores' */
const STEADY_RATE = 200;

const pgEnv = (url: string) => ({ GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: url, GATEWAY_NODE_ID: 'n1', GATEWAY_CLUSTER_SECRET: 'bench-cluster-secret-0123456789abcdef' });

export async function run(): Promise<BenchResult[]> {
  const server: TestPostgres = await startPostgres();
  const receiver = await startChild('./receiver.js');
  const results: BenchResult[] = [];
  const stopped: TestDaemon[] = [];
  try {
    // the baseline: one daemon on SQLite
    const sqlite = await prepared({}, receiver, 's');
    stopped.push(sqlite.daemon);
    const base = await sends(sqlite.daemon, sqlite.sessions);
    const sqliteSteady = await floorWhileSending(sqlite.daemon, sqlite.sessions, STEADY_RATE);
    const sqliteSaturated = await floorWhileSending(sqlite.daemon, sqlite.sessions);
    const sqliteHistory = await history(sqlite.daemon, sqlite.sessions[0]!);
    await sqlite.daemon.cleanup();

    // the node with its database at no added delay (through the relay, which counts the round trips)
    const database = `remote_${Date.now()}`;
    server.createDatabase(database);
    const direct = await tcpRelay(server, database);
    const node = await prepared(pgEnv(direct.url), receiver, 'p');
    stopped.push(node.daemon);
    const cpuBefore = { daemon: cpuMicros(node.daemon.child.pid)!, postgres: postgresCpuMicros() };
    const own = await sends(node.daemon, node.sessions);
    const cpuPerSend = (cpuMicros(node.daemon.child.pid)! - cpuBefore.daemon + postgresCpuMicros() - cpuBefore.postgres) / own.answered;
    results.push(
      result('pg-remote', 'sends/s answered, one node on PostgreSQL, no added delay (vs one daemon on SQLite; target ≥ 0.25)', own.rps, base.rps, 'req/s'),
      result('pg-remote', 'CPU per send, node + PostgreSQL (vs the SQLite daemon’s sends/s turned into µs per send at one core)', cpuPerSend, 1e6 / base.rps, 'µs'),
    );
    const [session] = node.sessions;
    // the load's webhook deliveries are done first: their claims and outcomes would be counted with the next send
    await waitForDeliveries(receiver, 0);
    const sendTrips = await roundTrips(direct, receiver, () => node.daemon.request('POST', '/api/messages/send', JSON.parse(sendBody(session!))));
    const inboundTrips = await roundTrips(direct, receiver, () => node.daemon.request('POST', `/api/sandbox/sessions/${session}/inbound`, { from: '+15550007777', type: 'text', text: 'hello' }));
    results.push(
      result('pg-remote', 'round trips to PostgreSQL per send until its answer, reads and commit included (vs the target, 4)', sendTrips.request, 4, 'trips'),
      result('pg-remote', 'round trips after a send until its webhook POST arrived: acks, claims, outcome (vs the send’s own)', sendTrips.after, sendTrips.request, 'trips'),
      result('pg-remote', 'round trips per inbound message, stored, its event and its webhook delivery (vs the send’s own)', inboundTrips.request + inboundTrips.after, sendTrips.request, 'trips'),
    );
    const pgHistory = await history(node.daemon, node.sessions[1]!);
    if (pgHistory.status !== 200 || sqliteHistory.status !== 200) throw new Error(`pg-remote bench: history sync answered ${pgHistory.status} on PostgreSQL, ${sqliteHistory.status} on SQLite`);
    results.push(
      result('pg-remote', `history sync of ${HISTORY_MESSAGES} messages on PostgreSQL, duration (vs on SQLite)`, pgHistory.ms, sqliteHistory.ms, 'ms'),
      result('pg-remote', 'history sync on PostgreSQL: longest event-loop stall (vs the target, 100 ms)', pgHistory.stallMs, 100, 'ms'),
      result('pg-remote', 'history sync on SQLite: longest event-loop stall (vs the target, 100 ms)', sqliteHistory.stallMs, 100, 'ms'),
    );
    await node.daemon.cleanup();
    direct.cut();

    for (const delayMs of DELAYS_MS) {
      const name = `remote_${delayMs}ms_${Date.now()}`;
      server.createDatabase(name);
      const relay = await tcpRelay(server, name, { delayMs });
      const delayed = await prepared(pgEnv(relay.url), receiver, `d${delayMs}`);
      stopped.push(delayed.daemon);
      try {
        const loaded = await sends(delayed.daemon, delayed.sessions);
        results.push(result('pg-remote', `sends/s answered at ${delayMs} ms added delay (vs no added delay${delayMs === 1 ? '; target ≥ 0.6' : ''})`, loaded.rps, own.rps, 'req/s'));
        if (delayMs === 5) {
          const steady = await floorWhileSending(delayed.daemon, delayed.sessions, STEADY_RATE);
          const saturated = await floorWhileSending(delayed.daemon, delayed.sessions);
          results.push(
            result('pg-remote', `GET /api/nope p99 while ${STEADY_RATE} sends/s run at 5 ms added delay (vs the target, 20 ms)`, steady.p99, 20, 'ms'),
            result('pg-remote', `GET /api/nope p99 while ${STEADY_RATE} sends/s run, the SQLite daemon (vs the target, 20 ms)`, sqliteSteady.p99, 20, 'ms'),
            result('pg-remote', 'GET /api/nope p99 while sends run flat out at 5 ms added delay (vs the SQLite daemon flat out)', saturated.p99, sqliteSaturated.p99, 'ms'),
          );
        }
      } finally {
        await delayed.daemon.cleanup();
        relay.cut();
      }
    }
    return results;
  } finally {
    await Promise.all(stopped.map((daemon) => daemon.cleanup().catch(() => {})));
    await receiver.stop();
    server.stop();
  }
}

/** the receiver's count has not moved for 200 ms (the POSTs of what came before are in), and is past `floor` */
async function waitForDeliveries(receiver: Child, floor: number): Promise<void> {
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = await received(receiver);
    if (now === last && now >= floor) return;
    last = now;
  }
}
