// Overload: while a flooding client hammers the daemon with sends under its own API key (in its own process, on a bounded
// number of connections: no pipelining) plus unauthenticated 2 MB junk POSTs (another process), a second client with its
// own key and session measures GET /api/health and a send, one request at a time; against the same probes without the
// flood, in the same daemon and run. Two flood rounds: the flooding key without a limit (only the per-key in-flight share,
// server.maxRequestsInFlightPerKey, holds it back) and with a rateLimitPerMinute (answered 429 right after authentication).
// The CPU time of the daemon and of the flood processes is reported, since all of them share the machine's cores.
// BENCH_FLOOD=sends|junk runs one of the two floods; BENCH_SEND_CONNECTIONS / BENCH_JUNK_CONNECTIONS size them.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './types.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { cpuMicros } from './support/cpu.js';
import { benchDaemon, pairedSession, type TestDaemon } from './support/gateway.js';
import { startChild } from './support/process.js';
import { percentile, result, round } from './support/report.js';

const PROBE_S = Number(process.env.BENCH_DURATION_S ?? 6);
const PER_KEY = DEFAULT_CONFIG.server.maxRequestsInFlightPerKey;
// twice the flooding key's share: it always has more requests waiting than it may hold, without unbounded pipelining
const SEND_CONNECTIONS = Number(process.env.BENCH_SEND_CONNECTIONS ?? PER_KEY * 2);
const JUNK_CONNECTIONS = Number(process.env.BENCH_JUNK_CONNECTIONS ?? 16);
const JUNK_BYTES = 2 * 1024 * 1024;
// a per-minute window lets a key spend its whole minute at once: 600 a minute is about 10 sends/s, and 600 at most per round
const FLOOD_RATE_LIMIT = Number(process.env.BENCH_FLOOD_RATE_LIMIT ?? 600);

interface FloodStats {
  name: string;
  rps: number;
  requests: number;
  statuses: Record<string, number>;
  codes: Record<string, { count?: number }>;
  cpuMicros: number;
}

interface Probe {
  p99: number;
  count: number;
  ok: number;
}

/** One request at a time for PROBE_S seconds; every answer counts (a 503 SERVER_BUSY is an answer, given at once). */
async function probe(daemon: TestDaemon, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown): Promise<Probe> {
  const latencies: number[] = [];
  let ok = 0;
  const end = performance.now() + PROBE_S * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await daemon.request(method, path, body, key);
    latencies.push(performance.now() - started);
    if (res.status < 300) ok++;
    else if (res.status !== 503) throw new Error(`overload bench: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
  }
  latencies.sort((a, b) => a - b);
  return { p99: percentile(latencies, 99), count: latencies.length, ok };
}

async function probeBoth(daemon: TestDaemon, key: string, send: unknown): Promise<{ health: Probe; send: Probe }> {
  const [health, sent] = await Promise.all([probe(daemon, 'GET', '/api/health', null), probe(daemon, 'POST', '/api/messages/send', key, send)]);
  return { health, send: sent };
}

interface Round {
  health: Probe;
  send: Probe;
  floods: FloodStats[];
  /** CPU share of one core over the round: the daemon, the flood processes */
  daemonCores: number;
  floodCores: number;
  /** daemon CPU µs per flood request answered (probes included in the CPU, negligible beside the flood) */
  daemonUsPerFloodRequest: number;
}

const count = (stats: FloodStats | undefined, code: string) => stats?.codes[code]?.count ?? 0;
const pct = (part: number, whole: number) => `${whole ? Math.round((100 * part) / whole) : 0}%`;

/** The flood processes run while the probes measure; the daemon's CPU is read from /proc around the whole round. */
async function floodRound(daemon: TestDaemon, dir: string, name: string, floodKey: string, key: string, send: unknown, floodSend: unknown): Promise<Round> {
  const url = `${daemon.url}/api/messages/send`;
  const loads = [
    { name: 'sends', url, method: 'POST', connections: SEND_CONNECTIONS, headers: { authorization: `Bearer ${floodKey}` }, body: JSON.stringify(floodSend) },
    { name: 'junk', url, method: 'POST', connections: JUNK_CONNECTIONS, bodyBytes: JUNK_BYTES },
  ].filter((load) => load.connections > 0 && (!process.env.BENCH_FLOOD || process.env.BENCH_FLOOD === load.name));
  const daemonCpuStart = cpuMicros(daemon.child.pid)!;
  const started = performance.now();
  // each load in its own process, so that neither starves the other's event loop
  const floods = await Promise.all(
    loads.map((load) => startChild('./flood.js', { FLOOD_DURATION_S: String(PROBE_S + 2), FLOOD_REPORT: join(dir, `${name}-${load.name}.json`), FLOOD_LOADS: JSON.stringify([load]) })),
  );
  const floodsDone = Promise.all(floods.map((flood) => new Promise<void>((done) => (flood.process.exitCode !== null ? done() : flood.process.once('exit', () => done())))));
  await new Promise((r) => setTimeout(r, 1000)); // the flood reaches its pace
  const { health, send: sent } = await probeBoth(daemon, key, send);
  await floodsDone;
  const elapsedUs = (performance.now() - started) * 1000;
  const daemonCores = (cpuMicros(daemon.child.pid)! - daemonCpuStart) / elapsedUs;
  const stats = loads.flatMap((load) => {
    const path = join(dir, `${name}-${load.name}.json`);
    return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as FloodStats[]) : [];
  });
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${name}: ${JSON.stringify(stats)}\n`);
  const floodCores = stats.reduce((sum, s) => sum + s.cpuMicros, 0) / elapsedUs;
  const floodRequests = stats.reduce((sum, s) => sum + s.requests, 0);
  const daemonUsPerFloodRequest = floodRequests ? (daemonCores * elapsedUs) / floodRequests : 0;
  return { health, send: sent, floods: stats, daemonCores, floodCores, daemonUsPerFloodRequest };
}

function rows(label: string, round_: Round, quiet: { health: Probe; send: Probe }): BenchResult[] {
  const sends = round_.floods.find((s) => s.name === 'sends');
  const junk = round_.floods.find((s) => s.name === 'junk');
  const mix = sends
    ? `2xx ${pct(count(sends, '200') + count(sends, '201') + count(sends, '202'), sends.requests)}, 429 ${pct(count(sends, '429'), sends.requests)}, 503 ${pct(count(sends, '503'), sends.requests)}`
    : 'none';
  const junkMix = junk ? `401 ${pct(count(junk, '401'), junk.requests)}, 503 ${pct(count(junk, '503'), junk.requests)}` : 'none';
  return [
    result('overload', `p99 ms of GET /api/health, one at a time, during the flood ${label} vs without (lower is better)`, round_.health.p99, quiet.health.p99, 'ms'),
    result('overload', `p99 ms of a send (its own key and session), one at a time, during the flood ${label} vs without (lower is better)`, round_.send.p99, quiet.send.p99, 'ms'),
    result('overload', `share of those sends answered 2xx during the flood ${label} vs without`, round(round_.send.ok / Math.max(1, round_.send.count), 3), round(quiet.send.ok / Math.max(1, quiet.send.count), 3), ''),
    result(
      'overload',
      `context: the flood ${label}: its sends answered per second (${SEND_CONNECTIONS} connections; ${mix}); its unauthenticated ${JUNK_BYTES / 1024 / 1024} MB junk POSTs per second on ${JUNK_CONNECTIONS} connections: ${round(junk?.rps ?? 0)} (${junkMix})`,
      sends?.rps ?? 0,
      sends?.rps ?? 0,
      'req/s',
    ),
    result(
      'overload',
      `context: CPU of the daemon during the flood ${label}, in cores (vs the flood processes' CPU, in cores); the daemon's CPU per flood request answered: ${Math.round(round_.daemonUsPerFloodRequest)} µs`,
      round(round_.daemonCores, 2),
      round(round_.floodCores, 2),
      'cores',
    ),
  ];
}

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon();
  const dir = mkdtempSync(join(tmpdir(), 'overload-bench-'));
  try {
    await pairedSession(daemon, 'a', '+15550900001');
    await pairedSession(daemon, 'b', '+15550900002');
    await pairedSession(daemon, 'c', '+15550900003');
    await pairedSession(daemon, 'd', '+15550900004');
    const newKey = async (name: string, rateLimitPerMinute?: number) =>
      (await daemon.request('POST', '/api/account/keys', { name, scopes: ['messages:send'], ...(rateLimitPerMinute ? { rateLimitPerMinute } : {}) })).body.data.key as string;
    const key = await newKey('probe');
    const floodKey = await newKey('flood');
    const limitedFloodKey = await newKey('flood-limited', FLOOD_RATE_LIMIT);
    // the flood sends from a to b; the measured client from c to d (a session's sends and events queue one at a time)
    const send = { session: 'c', chatId: '+15550900004', type: 'text', text: 'probe' };
    const floodSend = { session: 'a', chatId: '+15550900002', type: 'text', text: 'flood' };
    await probeBoth(daemon, key, send); // warm-up
    const quiet = await probeBoth(daemon, key, send);
    const unlimited = await floodRound(daemon, dir, 'unlimited', floodKey, key, send, floodSend);
    const limited = await floodRound(daemon, dir, 'limited', limitedFloodKey, key, send, floodSend);
    const healthAfter = await daemon.request('GET', '/api/health', undefined, null);
    if (healthAfter.status !== 200) throw new Error(`overload bench: the daemon is not healthy after the flood (${healthAfter.status})`);
    return [...rows('(its key unlimited)', unlimited, quiet), ...rows(`(its key at rateLimitPerMinute ${FLOOD_RATE_LIMIT})`, limited, quiet)];
  } finally {
    await daemon.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}
