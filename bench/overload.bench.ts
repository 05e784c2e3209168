// Overload: while a flooding client (two processes of its own) hammers the daemon with authenticated sends far past
// server.maxRequestsInFlight and with unauthenticated 2 MB junk bodies, a second client measures GET /api/health and a
// send one request at a time; against the same measured without the flood, in the same daemon and run.
// BENCH_FLOOD=sends|junk runs one of the two floods; BENCH_IN_FLIGHT=N sets the daemon's cap.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './types.js';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { benchDaemon, pairedSession, type TestDaemon } from './support/gateway.js';
import { startChild } from './support/process.js';
import { percentile, result } from './support/report.js';

const PROBE_S = Number(process.env.BENCH_DURATION_S ?? 6);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? DEFAULT_CONFIG.server.maxRequestsInFlight);
const SEND_CONNECTIONS = Math.max(512, IN_FLIGHT * 2);
const JUNK_CONNECTIONS = 64;
const JUNK_BYTES = 2 * 1024 * 1024;

interface FloodStats {
  name: string;
  rps: number;
  requests: number;
  statuses: Record<string, number>;
}

interface Probe {
  p99: number;
  p50: number;
  count: number;
  ok: number;
  busy: number;
}

/** One request at a time for PROBE_S seconds; every answer counts (a 503 SERVER_BUSY is an answer, given at once). */
async function probe(daemon: TestDaemon, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown): Promise<Probe> {
  const latencies: number[] = [];
  let ok = 0;
  let busy = 0;
  const end = performance.now() + PROBE_S * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await daemon.request(method, path, body, key);
    latencies.push(performance.now() - started);
    if (res.status < 300) ok++;
    else if (res.status === 503) busy++;
    else throw new Error(`overload bench: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
  }
  latencies.sort((a, b) => a - b);
  return { p99: percentile(latencies, 99), p50: percentile(latencies, 50), count: latencies.length, ok, busy };
}

async function probeBoth(daemon: TestDaemon, key: string, send: unknown): Promise<{ health: Probe; send: Probe }> {
  const [health, sent] = await Promise.all([probe(daemon, 'GET', '/api/health', null), probe(daemon, 'POST', '/api/messages/send', key, send)]);
  return { health, send: sent };
}

const pct = (part: number, whole: number) => `${whole ? Math.round((100 * part) / whole) : 0}%`;

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon({ config: `server:\n  maxRequestsInFlight: ${IN_FLIGHT}\n` });
  const dir = mkdtempSync(join(tmpdir(), 'overload-bench-'));
  try {
    await pairedSession(daemon, 'a', '+15550900001');
    await pairedSession(daemon, 'b', '+15550900002');
    await pairedSession(daemon, 'c', '+15550900003');
    await pairedSession(daemon, 'd', '+15550900004');
    const key = (await daemon.request('POST', '/api/admin/keys', { name: 'bench', scopes: ['messages:send'] })).body.data.key as string;
    const floodKey = (await daemon.request('POST', '/api/admin/keys', { name: 'flood', scopes: ['messages:send'] })).body.data.key as string;
    // the flood sends from a to b; the measured client from c to d (a session's sends and events queue one at a time)
    const send = { session: 'c', chatId: '+15550900004', type: 'text', text: 'probe' };
    const floodSend = { session: 'a', chatId: '+15550900002', type: 'text', text: 'flood' };
    await probeBoth(daemon, key, send); // warm-up
    const quiet = await probeBoth(daemon, key, send);

    const url = `${daemon.url}/api/messages/send`;
    // each load in its own process, so that neither starves the other's event loop
    const floods = await Promise.all(
      [
        { name: 'sends', url, method: 'POST', connections: SEND_CONNECTIONS, headers: { authorization: `Bearer ${floodKey}` }, body: JSON.stringify(floodSend) },
        { name: 'junk', url, method: 'POST', connections: JUNK_CONNECTIONS, bodyBytes: JUNK_BYTES },
      ]
        .filter((load) => !process.env.BENCH_FLOOD || process.env.BENCH_FLOOD === load.name)
        .map((load) => startChild('./flood.js', { FLOOD_DURATION_S: String(PROBE_S + 2), FLOOD_REPORT: join(dir, `${load.name}.json`), FLOOD_LOADS: JSON.stringify([load]) })),
    );
    const floodsDone = Promise.all(floods.map((flood) => new Promise<void>((done) => (flood.process.exitCode !== null ? done() : flood.process.once('exit', () => done())))));
    await new Promise((r) => setTimeout(r, 1000)); // the flood reaches its pace
    const flooded = await probeBoth(daemon, key, send);
    await floodsDone;
    const none = (name: string): FloodStats[] => [{ name, rps: 0, requests: 0, statuses: { '2xx': 0, '4xx': 0, '5xx': 0 } }];
    const floodStats = ['sends', 'junk'].flatMap((name) => (existsSync(join(dir, `${name}.json`)) ? (JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as FloodStats[]) : none(name)));
    if (process.env.BENCH_VERBOSE) process.stderr.write(`${JSON.stringify(floodStats)}\n`);
    const sends = floodStats.find((s) => s.name === 'sends')!;
    const junk = floodStats.find((s) => s.name === 'junk')!;
    const healthAfter = await daemon.request('GET', '/api/health', undefined, null);
    if (healthAfter.status !== 200) throw new Error(`overload bench: the daemon is not healthy after the flood (${healthAfter.status})`);
    return [
      result('overload', `p99 ms of GET /api/health, one at a time, during the flood vs without (lower is better)`, flooded.health.p99, quiet.health.p99, 'ms'),
      result('overload', `p99 ms of a send (API key), one at a time, during the flood vs without (lower is better; a 503 counts, it is an answer)`, flooded.send.p99, quiet.send.p99, 'ms'),
      result('overload', `share of those sends answered 2xx during the flood (the rest 503 SERVER_BUSY) vs without`, flooded.send.ok / flooded.send.count, quiet.send.ok / quiet.send.count, ''),
      result('overload', `context: the flood's sends answered per second (${SEND_CONNECTIONS} connections; ${pct(sends.statuses['5xx']!, sends.requests)} of them 503 SERVER_BUSY)`, sends.rps, sends.rps, 'req/s'),
      result('overload', `context: the flood's unauthenticated ${JUNK_BYTES / 1024 / 1024} MB junk POSTs answered per second, bodies unread (${JUNK_CONNECTIONS} connections; 401, or 503 SERVER_BUSY for ${pct(junk.statuses['5xx']!, junk.requests)})`, junk.rps, junk.rps, 'req/s'),
    ];
  } finally {
    await daemon.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}
