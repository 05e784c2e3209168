// Start-up and memory at rest: an empty daemon (`gateway serve`, sandbox default, no session, no S3) timed from spawn to
// its first answered `GET /api/health`, and its RSS once idle; against a bare `node -e` http server, same rounds.
// BENCH_STARTUP_BIN runs another build's bin/gateway (the "before" of a change); BENCH_STARTUP_ROUNDS the rounds.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './types.js';
import { BIN, freePort, MASTER_KEY } from '../test/helpers/daemon.js';
import { result } from './support/report.js';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 7);
const GATEWAY = process.env.BENCH_STARTUP_BIN ?? BIN;
/** how long a started process is left alone before its RSS is read */
const IDLE_MS = 1500;
const BARE = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')`;

interface Sample {
  listenMs: number;
  rssKb: number;
}

function healthy(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/health', agent: false }, (res) => {
      res.resume();
      res.once('end', () => done(res.statusCode === 200));
    });
    req.once('error', () => done(false));
    req.end();
  });
}

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

async function sample(args: string[], env: Record<string, string>, cwd: string): Promise<Sample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', PORT: String(port), GATEWAY_PORT: String(port), ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  try {
    while (!(await healthy(port))) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const listenMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { listenMs, rssKb: rssKb(child.pid!) };
  } finally {
    await stop(child);
  }
}

async function daemonSample(): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-startup-'));
  try {
    return await sample([GATEWAY, 'serve'], {
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_DEFAULT_ENGINE: 'sandbox',
      GATEWAY_LOG_LEVEL: 'error',
    }, dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run(): Promise<BenchResult[]> {
  const daemon: Sample[] = [];
  const bare: Sample[] = [];
  // alternating, so both see the same machine; the first pair warms the disk cache and is dropped
  for (let i = 0; i <= ROUNDS; i += 1) {
    const d = await daemonSample();
    const b = await sample(['-e', BARE], {}, tmpdir());
    if (i === 0) continue;
    daemon.push(d);
    bare.push(b);
  }
  const listen = median(daemon.map((s) => s.listenMs));
  const rss = median(daemon.map((s) => s.rssKb)) / 1024;
  return [
    result('startup', `empty daemon: spawn to first GET /api/health answered, median of ${ROUNDS}, ms vs bare node http server (lower is better)`, listen, median(bare.map((s) => s.listenMs)), 'ms'),
    result('startup', `empty daemon: RSS MB idle ${IDLE_MS} ms after listening, median of ${ROUNDS}, vs bare node http server (lower is better)`, rss, median(bare.map((s) => s.rssKb)) / 1024, 'MB'),
  ];
}
