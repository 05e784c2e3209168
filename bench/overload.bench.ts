// Overload: while a flooding client hammers the daemon with sends under its own API key (in its own process, on a bounded
// number of connections: no pipelining) plus unauthenticated 2 MB junk POSTs (another process), a second client with its
// own key and session measures GET /api/health and a send, one request at a time; against the same probes without the
// flood, in the same daemon and run. Two flood rounds: the flooding key without a limit (only the per-key in-flight share,
// server.maxRequestsInFlightPerKey, holds it back) and with a rateLimitPerMinute (answered 429 right after authentication).
// The CPU time of the daemon and of the flood processes is reported, since all of them share the machine's cores.
// The same probe code and the same flood, in the same run, also meet a bare Koa server (support/bare-overload.ts) that
// does the least any server must do to refuse the flood: its p99 under the flood says how much of the daemon's rise no
// server avoids on this machine. The flood is also tried at fewer connections (BENCH_FLOOD_STEPS, junk scaled alike),
// against the rate-limited daemon and the bare server, rounds alternating, to show where p99 starts to rise for each.
// BENCH_FLOOD=sends|junk runs one of the two floods; BENCH_SEND_CONNECTIONS / BENCH_JUNK_CONNECTIONS size them.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './types.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { cpuMicros } from './support/cpu.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { startChild, type Child } from './support/process.js';
import { percentile, result, round } from './support/report.js';

const PROBE_S = Number(process.env.BENCH_DURATION_S ?? 6);
const PER_KEY = DEFAULT_CONFIG.server.maxRequestsInFlightPerKey;
// twice the flooding key's share: it always has more requests waiting than it may hold, without unbounded pipelining
const SEND_CONNECTIONS = Number(process.env.BENCH_SEND_CONNECTIONS ?? PER_KEY * 2);
const JUNK_CONNECTIONS = Number(process.env.BENCH_JUNK_CONNECTIONS ?? 16);
const JUNK_BYTES = 2 * 1024 * 1024;
// a per-minute window lets a key spend its whole minute at once: 600 a minute is about 10 sends/s, and 600 at most per round
const FLOOD_RATE_LIMIT = Number(process.env.BENCH_FLOOD_RATE_LIMIT ?? 600);
const FLOOD_STEPS = (process.env.BENCH_FLOOD_STEPS ?? '16,32')
  .split(',')
  .map(Number)
  .filter((n) => n > 0 && n !== SEND_CONNECTIONS);
const BARE_KEY = 'bare-overload-flood-key';

/** What the probes and the flood talk to: the daemon or the bare server, and the pid whose CPU is read. */
interface Target {
  url: string;
  pid: number;
}

interface Answer {
  status: number;
  body: unknown;
}

/** The probes' client for both targets alike: fetch, the body read, nothing checked beyond the status. */
async function request(target: Target, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(target.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text };
}

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
async function probe(target: Target, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown): Promise<Probe> {
  const latencies: number[] = [];
  let ok = 0;
  const end = performance.now() + PROBE_S * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await request(target, method, path, key, body);
    latencies.push(performance.now() - started);
    if (res.status < 300) ok++;
    else if (res.status !== 503) throw new Error(`overload bench: ${method} ${path} answered ${res.status} ${String(res.body)}`);
  }
  latencies.sort((a, b) => a - b);
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${target.url} ${method} ${path}: ${latencies.length} answers, slowest ${latencies.slice(-3).map((l) => Math.round(l)).join(', ')} ms\n`);
  return { p99: percentile(latencies, 99), count: latencies.length, ok };
}

interface Probes {
  health: Probe;
  /** none on the bare server, which has no send to make */
  send?: Probe;
}

/** Health and (with a key) a send, both one at a time and at the same time; health alone on the bare server. */
async function probeBoth(target: Target, key?: string, send?: unknown): Promise<Probes> {
  const [health, sent] = await Promise.all([
    probe(target, 'GET', '/api/health', null),
    key ? probe(target, 'POST', '/api/messages/send', key, send) : Promise.resolve(undefined),
  ]);
  return { health, send: sent };
}

interface Round extends Probes {
  floods: FloodStats[];
  /** CPU share of one core over the round: the server (daemon or bare Koa), the flood processes */
  serverCores: number;
  floodCores: number;
  /** server CPU µs per flood request answered (probes included in the CPU, negligible beside the flood) */
  serverUsPerFloodRequest: number;
}

const count = (stats: FloodStats | undefined, code: string) => stats?.codes[code]?.count ?? 0;
const pct = (part: number, whole: number) => `${whole ? Math.round((100 * part) / whole) : 0}%`;

interface Flood {
  key: string;
  send: unknown;
  sendConnections: number;
  junkConnections: number;
}

/** Junk connections in the same proportion to send connections as the default flood's. */
const junkFor = (sendConnections: number) => Math.round((sendConnections * JUNK_CONNECTIONS) / SEND_CONNECTIONS);

/** The flood processes run while the probes measure; the server's CPU is read from /proc around the whole round. */
async function floodRound(target: Target, dir: string, name: string, flood: Flood, key?: string, send?: unknown): Promise<Round> {
  const url = `${target.url}/api/messages/send`;
  const loads = [
    { name: 'sends', url, method: 'POST', connections: flood.sendConnections, headers: { authorization: `Bearer ${flood.key}` }, body: JSON.stringify(flood.send) },
    { name: 'junk', url, method: 'POST', connections: flood.junkConnections, bodyBytes: JUNK_BYTES },
  ].filter((load) => load.connections > 0 && (!process.env.BENCH_FLOOD || process.env.BENCH_FLOOD === load.name));
  const serverCpuStart = cpuMicros(target.pid)!;
  const started = performance.now();
  // each load in its own process, so that neither starves the other's event loop
  const floods = await Promise.all(
    loads.map((load) => startChild('./flood.js', { FLOOD_DURATION_S: String(PROBE_S + 2), FLOOD_REPORT: join(dir, `${name}-${load.name}.json`), FLOOD_LOADS: JSON.stringify([load]) })),
  );
  const floodsDone = Promise.all(floods.map((flood) => new Promise<void>((done) => (flood.process.exitCode !== null ? done() : flood.process.once('exit', () => done())))));
  await new Promise((r) => setTimeout(r, 1000)); // the flood reaches its pace
  const { health, send: sent } = await probeBoth(target, key, send);
  await floodsDone;
  const elapsedUs = (performance.now() - started) * 1000;
  const serverCores = (cpuMicros(target.pid)! - serverCpuStart) / elapsedUs;
  const stats = loads.flatMap((load) => {
    const path = join(dir, `${name}-${load.name}.json`);
    return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as FloodStats[]) : [];
  });
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${name}: ${JSON.stringify(stats)}\n`);
  const floodCores = stats.reduce((sum, s) => sum + s.cpuMicros, 0) / elapsedUs;
  const floodRequests = stats.reduce((sum, s) => sum + s.requests, 0);
  const serverUsPerFloodRequest = floodRequests ? (serverCores * elapsedUs) / floodRequests : 0;
  return { health, send: sent, floods: stats, serverCores, floodCores, serverUsPerFloodRequest };
}

function rows(label: string, round_: Round, quiet: Probes): BenchResult[] {
  const sends = round_.floods.find((s) => s.name === 'sends');
  const junk = round_.floods.find((s) => s.name === 'junk');
  const mix = sends
    ? `2xx ${pct(count(sends, '200') + count(sends, '201') + count(sends, '202'), sends.requests)}, 429 ${pct(count(sends, '429'), sends.requests)}, 503 ${pct(count(sends, '503'), sends.requests)}`
    : 'none';
  const junkMix = junk ? `401 ${pct(count(junk, '401'), junk.requests)}, 503 ${pct(count(junk, '503'), junk.requests)}` : 'none';
  return [
    result('overload', `p99 ms of GET /api/health, one at a time, during the flood ${label} vs without (lower is better)`, round_.health.p99, quiet.health.p99, 'ms'),
    result('overload', `p99 ms of a send (its own key and session), one at a time, during the flood ${label} vs without (lower is better)`, round_.send!.p99, quiet.send!.p99, 'ms'),
    result('overload', `share of those sends answered 2xx during the flood ${label} vs without`, round(round_.send!.ok / Math.max(1, round_.send!.count), 3), round(quiet.send!.ok / Math.max(1, quiet.send!.count), 3), ''),
    result(
      'overload',
      `context: the flood ${label}: its sends answered per second (${SEND_CONNECTIONS} connections; ${mix}); its unauthenticated ${JUNK_BYTES / 1024 / 1024} MB junk POSTs per second on ${JUNK_CONNECTIONS} connections: ${round(junk?.rps ?? 0)} (${junkMix})`,
      sends?.rps ?? 0,
      sends?.rps ?? 0,
      'req/s',
    ),
    result(
      'overload',
      `context: CPU of the daemon during the flood ${label}, in cores (vs the flood processes' CPU, in cores); the daemon's CPU per flood request answered: ${Math.round(round_.serverUsPerFloodRequest)} µs`,
      round(round_.serverCores, 2),
      round(round_.floodCores, 2),
      'cores',
    ),
  ];
}

/** The daemon against the bare server under the same flood: what the daemon adds to the least any server can do. */
function bareRows(label: string, daemon: Round, bare: Round, bareQuiet: Probes, withSend: boolean): BenchResult[] {
  const cores = (r: Round) => `${round(r.serverCores, 2)}`;
  return [
    result('overload', `p99 ms of GET /api/health during the flood ${label}: daemon vs bare Koa under the same flood (lower is better)`, daemon.health.p99, bare.health.p99, 'ms'),
    ...(withSend
      ? [result('overload', `p99 ms of a send (daemon) during the flood ${label} vs bare Koa's health p99 under the same flood (lower is better)`, daemon.send!.p99, bare.health.p99, 'ms')]
      : []),
    result('overload', `bare Koa: p99 ms of GET /api/health during the flood ${label} vs without (lower is better)`, bare.health.p99, bareQuiet.health.p99, 'ms'),
    result(
      'overload',
      `context: the flood ${label}: CPU in cores of bare Koa (vs the daemon's ${cores(daemon)}; flood processes ${round(bare.floodCores, 2)} on bare Koa, ${round(daemon.floodCores, 2)} on the daemon); flood requests answered per second by bare Koa ${round(floodRps(bare))} (vs ${round(floodRps(daemon))} by the daemon); CPU µs per flood request ${Math.round(bare.serverUsPerFloodRequest)} (vs ${Math.round(daemon.serverUsPerFloodRequest)})`,
      round(bare.serverCores, 2),
      round(daemon.serverCores, 2),
      'cores',
    ),
  ];
}

const floodRps = (r: Round) => r.floods.reduce((sum, s) => sum + s.rps, 0);

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon();
  const bareChild: Child = await startChild('./bare-overload.js', { BARE_KEY });
  const dir = mkdtempSync(join(tmpdir(), 'overload-bench-'));
  try {
    const onDaemon: Target = { url: daemon.url, pid: daemon.child.pid! };
    const onBare: Target = { url: `http://127.0.0.1:${bareChild.port}`, pid: bareChild.process.pid! };
    await pairedSession(daemon, 'a', '+15550900001');
    await pairedSession(daemon, 'b', '+15550900002');
    await pairedSession(daemon, 'c', '+15550900003');
    await pairedSession(daemon, 'd', '+15550900004');
    const newKey = async (name: string, rateLimitPerMinute?: number) =>
      (await daemon.request('POST', '/api/account/keys', { name, scopes: ['messages:send'], ...(rateLimitPerMinute ? { rateLimitPerMinute } : {}) })).body.data.key as string;
    const key = await newKey('probe');
    // the flood sends from a to b; the measured client from c to d (a session's sends and events queue one at a time)
    const send = { session: 'c', chatId: '+15550900004', type: 'text', text: 'probe' };
    const floodSend = { session: 'a', chatId: '+15550900002', type: 'text', text: 'flood' };
    const flood = (key_: string, sendConnections: number): Flood => ({
      key: key_,
      send: floodSend,
      sendConnections,
      junkConnections: sendConnections === SEND_CONNECTIONS ? JUNK_CONNECTIONS : junkFor(sendConnections),
    });
    await probeBoth(onDaemon, key, send); // warm-up
    await probeBoth(onBare);
    const quiet = await probeBoth(onDaemon, key, send);
    const bareQuiet = await probeBoth(onBare);
    // fewer connections first, rate-limited daemon and bare server alternating; every rate-limited round gets a fresh key,
    // since a per-minute window spent in one round would make the next all 429 from its first request
    const steps: BenchResult[] = [];
    let n = 0;
    for (const connections of FLOOD_STEPS) {
      const limited = await floodRound(onDaemon, dir, `limited-${connections}`, flood(await newKey(`flood-limited-${n++}`, FLOOD_RATE_LIMIT), connections), key, send);
      const bare = await floodRound(onBare, dir, `bare-${connections}`, flood(BARE_KEY, connections), undefined, undefined);
      steps.push(...bareRows(`(its key at rateLimitPerMinute ${FLOOD_RATE_LIMIT}; ${connections} + ${flood('', connections).junkConnections} junk connections)`, limited, bare, bareQuiet, true));
    }
    const unlimited = await floodRound(onDaemon, dir, 'unlimited', flood(await newKey('flood'), SEND_CONNECTIONS), key, send);
    const bare = await floodRound(onBare, dir, 'bare', flood(BARE_KEY, SEND_CONNECTIONS), undefined, undefined);
    const limited = await floodRound(onDaemon, dir, 'limited', flood(await newKey('flood-limited', FLOOD_RATE_LIMIT), SEND_CONNECTIONS), key, send);
    const healthAfter = await daemon.request('GET', '/api/health', undefined, null);
    if (healthAfter.status !== 200) throw new Error(`overload bench: the daemon is not healthy after the flood (${healthAfter.status})`);
    const big = `${SEND_CONNECTIONS} + ${JUNK_CONNECTIONS} junk connections`;
    return [
      ...rows('(its key unlimited)', unlimited, quiet),
      ...rows(`(its key at rateLimitPerMinute ${FLOOD_RATE_LIMIT})`, limited, quiet),
      result('overload', 'bare Koa (health + 429 after a constant-time bearer check and JSON parse): p99 ms of GET /api/health without a flood vs the daemon\'s (lower is better)', bareQuiet.health.p99, quiet.health.p99, 'ms'),
      ...bareRows(`(its key unlimited; ${big})`, unlimited, bare, bareQuiet, true),
      ...bareRows(`(its key at rateLimitPerMinute ${FLOOD_RATE_LIMIT}; ${big})`, limited, bare, bareQuiet, true).filter((r) => !r.metric.startsWith('bare Koa:')),
      ...steps,
    ];
  } finally {
    await daemon.cleanup();
    await bareChild.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
