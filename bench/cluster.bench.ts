// Several daemons on one PostgreSQL (issue 22): sends/s answered and webhook deliveries/s with one, two and three nodes
// on this machine (the database, every node, the receiver and autocannon share its cores, so this reports the shape,
// not a speed-up), each against one daemon on SQLite under the same load in the same run; and the failover of 100
// sandbox sessions after `kill -9` of their node, from the kill until every one is CONNECTED on another node, against
// the lease time, and the events recorded that never reached the receiver (0 expected).
import autocannon from 'autocannon';
import type { BenchResult } from './types.js';
import { benchDaemon, pairedSession, type TestDaemon } from './support/gateway.js';
import { startChild, type Child } from './support/process.js';
import { result } from './support/report.js';
import { cpuMicros, postgresCpuMicros } from './support/cpu.js';
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import { waitFor } from '../test/helpers/daemon.js';
import { PgDb } from '../src/store/pg-db.js';

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const LEASE_SECONDS = 5;
const FAILOVER_SESSIONS = 100;
/** sandbox sessions per node that the load sends through */
const PER_NODE = 2;

async function received(receiver: Child): Promise<number> {
  return ((await (await fetch(`http://127.0.0.1:${receiver.port}/count`)).json()) as { received: number }).received;
}

/** the throughput rounds keep the default lease (20 s); the failover's nodes a short one, what is measured against it */
const nodeEnv = (url: string, id: string, leaseSeconds?: number) => ({
  GATEWAY_STORE: 'postgres',
  GATEWAY_DATABASE_URL: url,
  GATEWAY_NODE_ID: id,
  GATEWAY_CLUSTER_SECRET: 'bench-cluster-secret-0123456789abcdef',
  ...(leaseSeconds ? { GATEWAY_LEASE_SECONDS: String(leaseSeconds) } : {}),
});

/** Sends through every node at once (CONNECTIONS in all), each node for sessions it runs; until the receiver has every POST. */
async function load(daemons: TestDaemon[], sessionsOf: Map<TestDaemon, string[]>, receiver: Child): Promise<{ answered: number; sends: number; deliveries: number }> {
  const before = await received(receiver);
  const started = performance.now();
  const runs = await Promise.all(
    daemons.map((daemon) =>
      autocannon({
        url: `${daemon.url}/api/messages/send`,
        method: 'POST',
        connections: Math.max(1, Math.round(CONNECTIONS / daemons.length)),
        duration: DURATION_S,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.masterKey}` },
        requests: sessionsOf.get(daemon)!.map((session) => ({ body: JSON.stringify({ session, chatId: '+15550009999', type: 'text', text: 'bench' }) })),
      }),
    ),
  );
  const answered = runs.reduce((sum, run) => sum + run['2xx'], 0);
  const sendSeconds = (performance.now() - started) / 1000;
  const deadline = Date.now() + 120_000;
  while ((await received(receiver)) - before < answered) {
    if (Date.now() > deadline) {
      const errors = daemons.flatMap((d) => d.output().split('\n').filter((line) => /"level":(40|50)/.test(line)).slice(0, 3).map((line) => line.slice(0, 400)));
      throw new Error(`cluster bench, ${daemons.length} node(s): the receiver got ${(await received(receiver)) - before} of ${answered} POSTs\n${errors.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { answered, sends: answered / sendSeconds, deliveries: answered / ((performance.now() - started) / 1000) };
}

/** Starts `count` nodes on a fresh database, pairs PER_NODE sessions on each, points one webhook at the receiver. */
async function cluster(server: TestPostgres, count: number, receiver: Child): Promise<{ daemons: TestDaemon[]; sessionsOf: Map<TestDaemon, string[]> }> {
  const url = server.createDatabase(`bench_${count}_${Date.now()}`);
  const daemons: TestDaemon[] = [];
  for (let i = 1; i <= count; i++) daemons.push(await benchDaemon({ env: nodeEnv(url, `n${i}`) }));
  await daemons[0]!.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.sent'] });
  for (const [i, daemon] of daemons.entries()) {
    for (let j = 0; j < PER_NODE; j++) await pairedSession(daemon, `b${i}x${j}`, `+1555100${i}${String(j).padStart(3, '0')}`);
  }
  // each node is sent the sessions it runs (the least-loaded rule places a new session, not the node it was created
  // through): a send to another node would be forwarded, and measure that hop instead
  const nodes = (await daemons[0]!.request('GET', '/api/cluster')).body.data.nodes as Array<{ id: string; sessions: string[] }>;
  const sessionsOf = new Map<TestDaemon, string[]>();
  for (const [i, daemon] of daemons.entries()) {
    const names = nodes.find((n) => n.id === `n${i + 1}`)?.sessions ?? [];
    if (names.length === 0) throw new Error(`cluster bench: node n${i + 1} runs no session: ${JSON.stringify(nodes)}`);
    sessionsOf.set(daemon, names);
  }
  return { daemons, sessionsOf };
}

/** webhook attempts time out after 2 s here, so a delivery the victim had claimed is free 7 s after its claim */
const FAILOVER_CONFIG = 'webhooks:\n  timeoutMs: 2000\n';

async function failover(server: TestPostgres, receiver: Child): Promise<{ ms: number; repaired: number; events: number; lost: number }> {
  const url = server.createDatabase(`failover_${Date.now()}`);
  const node = (id: string) => benchDaemon({ env: nodeEnv(url, id, LEASE_SECONDS), config: FAILOVER_CONFIG });
  const victim = await node('victim');
  const others: TestDaemon[] = [];
  const db = new PgDb(url);
  try {
    const before = await received(receiver);
    await victim.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook` });
    for (let at = 0; at < FAILOVER_SESSIONS; at += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, k) => pairedSession(victim, `f${at + k}`, `+1555200${String(at + k).padStart(4, '0')}`)));
    }
    // the others start once the victim runs all of them: nothing to adopt until it dies
    others.push(await node('n2'), await node('n3'));
    // sends until the kill, so that it finds deliveries claimed and in flight
    await Promise.all(Array.from({ length: 100 }, (_, i) => victim.request('POST', '/api/messages/send', { session: `f${i % FAILOVER_SESSIONS}`, chatId: '+15550009999', type: 'text', text: `before ${i}` })));
    const killedAt = performance.now();
    await victim.kill();
    const names = Array.from({ length: FAILOVER_SESSIONS }, (_, i) => `f${i}`);
    await waitFor(
      async () => {
        const nodes = (await others[0]!.request('GET', '/api/cluster')).body.data.nodes as Array<{ id: string; sessions: string[] }>;
        const held = new Set(nodes.filter((n) => n.id !== 'victim').flatMap((n) => n.sessions));
        if (!names.every((name) => held.has(name))) return false;
        for (let at = 0; at < names.length; at += 25) {
          const answers = await Promise.all(names.slice(at, at + 25).map((name) => others[0]!.request('GET', `/api/sessions/${name}`)));
          if (!answers.every((a) => a.status === 200 && a.body.data.status === 'CONNECTED')) return false;
        }
        return true;
      },
      10 * LEASE_SECONDS * 1000,
      'every session CONNECTED on another node',
    );
    const ms = performance.now() - killedAt;
    const answers = await Promise.all(names.map((name) => others[1]!.request('GET', `/api/sessions/${name}`)));
    // every event recorded, the victim's included, delivered: its claims lapse and the others attempt them
    const succeeded = async () => (await db.prepare("SELECT COUNT(*) FILTER (WHERE status = 'succeeded') AS done, COUNT(*) AS total FROM deliveries").get()) as { done: number; total: number };
    await waitFor(
      async () => {
        const { done, total } = await succeeded();
        return done === total && (await received(receiver)) - before >= total;
      },
      60_000,
      'every delivery made',
    ).catch(() => undefined);
    const { done, total } = await succeeded();
    return { ms, repaired: answers.filter((a) => a.body.data?.statusReason === 'SCAN_QR').length, events: total, lost: total - done };
  } finally {
    await db.close();
    await Promise.all([victim, ...others].map((daemon) => daemon.cleanup()));
  }
}

export async function run(): Promise<BenchResult[]> {
  const server = await startPostgres();
  const receiver = await startChild('./receiver.js');
  const results: BenchResult[] = [];
  try {
    const sqlite = await benchDaemon();
    let base: { sends: number; deliveries: number };
    try {
      await sqlite.request('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.sent'] });
      const names = ['solo0', 'solo1'];
      for (const [j, name] of names.entries()) await pairedSession(sqlite, name, `+15551009${String(j).padStart(3, '0')}`);
      base = await load([sqlite], new Map([[sqlite, names]]), receiver);
    } finally {
      await sqlite.cleanup();
    }
    let cpuPerSendOf1: number | undefined;
    for (const count of [1, 2, 3]) {
      const { daemons, sessionsOf } = await cluster(server, count, receiver);
      try {
        const nodesCpu = () => daemons.reduce((sum, daemon) => sum + (cpuMicros(daemon.child.pid) ?? 0), 0);
        const [nodesBefore, postgresBefore] = [nodesCpu(), postgresCpuMicros()];
        const measured = await load(daemons, sessionsOf, receiver);
        const [nodesPerSend, postgresPerSend] = [(nodesCpu() - nodesBefore) / measured.answered, (postgresCpuMicros() - postgresBefore) / measured.answered];
        const cpuPerSend = nodesPerSend + postgresPerSend;
        cpuPerSendOf1 ??= cpuPerSend;
        results.push(
          result('cluster', `sends/s answered, ${count} node(s) on PostgreSQL (vs one daemon on SQLite)`, measured.sends, base.sends, 'req/s'),
          result('cluster', `CPU µs per send until its webhook POST, ${count} node(s) and PostgreSQL together (vs one node's)`, cpuPerSend, cpuPerSendOf1, 'µs'),
          result('cluster', `  of which the nodes', ${count} node(s) (vs the total)`, nodesPerSend, cpuPerSend, 'µs'),
          result('cluster', `  of which PostgreSQL's, ${count} node(s) (vs the total)`, postgresPerSend, cpuPerSend, 'µs'),
          result('cluster', `webhook deliveries/s, ${count} node(s) on PostgreSQL (vs one daemon on SQLite)`, measured.deliveries, base.deliveries, '/s'),
        );
      } finally {
        await Promise.all(daemons.map((daemon) => daemon.cleanup()));
      }
    }
    const { ms, repaired, events, lost } = await failover(server, receiver);
    if (repaired) throw new Error(`cluster bench: ${repaired} sessions asked to be paired again after the failover`);
    results.push(
      result('cluster', `failover of ${FAILOVER_SESSIONS} sandbox sessions after kill -9: kill to all CONNECTED elsewhere (vs the lease; lower is better)`, ms, LEASE_SECONDS * 1000, 'ms'),
      result('cluster', 'failover: events recorded but not delivered (vs events recorded; 0 expected)', lost, events, 'events'),
    );
    return results;
  } finally {
    await receiver.stop();
    server.stop();
  }
}
