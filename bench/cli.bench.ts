// CLI latency: `gateway sessions list --json` wall time against a daemon with 1,000 sessions, vs a bare `node -e ""` start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { BenchResult } from './types.js';
import { BIN } from '../test/helpers/daemon.js';
import { benchDaemon } from './support/gateway.js';
import { result } from './support/report.js';

const run$ = promisify(execFile);
const COUNT = Number(process.env.BENCH_SESSIONS ?? 1000);
const RUNS = 7;

async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
}

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon();
  try {
    // 50 at a time: one key may have at most server.maxRequestsInFlightPerKey (64) requests in flight
    for (let i = 0; i < COUNT; i += 50) {
      const created = await Promise.all(Array.from({ length: Math.min(50, COUNT - i) }, (_, j) => daemon.request('POST', '/api/sessions', { name: `cli${i + j}` })));
      const refused = created.find((res) => res.status !== 201);
      if (refused) throw new Error(`cli bench: a session was not created (${refused.status} ${JSON.stringify(refused.body)})`);
    }
    const env = { ...process.env, GATEWAY_URL: daemon.url, GATEWAY_MASTER_KEY: daemon.masterKey };
    const list = await run$(process.execPath, [BIN, 'sessions', 'list', '--json'], { env, maxBuffer: 64 * 1024 * 1024 });
    const listed = (JSON.parse(list.stdout) as unknown[]).length;
    if (listed !== COUNT) throw new Error(`sessions list printed ${listed} sessions, expected ${COUNT}`);
    const bare = await median(() => run$(process.execPath, ['-e', '']));
    const cli = await median(() => run$(process.execPath, [BIN, 'sessions', 'list', '--json'], { env, maxBuffer: 64 * 1024 * 1024 }));
    return [result('cli', `sessions list --json with ${COUNT} sessions, wall ms vs bare node start (lower is better)`, cli, bare, 'ms')];
  } finally {
    await daemon.cleanup();
  }
}
