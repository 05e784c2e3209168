// `npm run bench [-- NAME…]`: runs the benchmarks in order (or the named ones), prints each table and JSON line, and
// writes .bench-results/latest.json for scripts/update-bench-doc.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { Bench, BenchResult } from './types.js';
import { printResults } from './support/report.js';

const BENCHES: Record<string, () => Promise<{ run: Bench }>> = {
  send: () => import('./send.bench.js'),
  governor: () => import('./governor.bench.js'),
  webhooks: () => import('./webhooks.bench.js'),
  fanout: () => import('./fanout.bench.js'),
  inbound: () => import('./inbound.bench.js'),
  sessions: () => import('./sessions.bench.js'),
  'baileys-footprint': () => import('./baileys-footprint.bench.js'),
  'baileys-scale': () => import('./baileys-scale.bench.js'),
  cli: () => import('./cli.bench.js'),
  startup: () => import('./startup.bench.js'),
  overload: () => import('./overload.bench.js'),
  media: () => import('./media.bench.js'),
  cluster: () => import('./cluster.bench.js'),
  'pg-remote': () => import('./pg-remote.bench.js'),
  'event-log': () => import('./event-log.bench.js'),
  chats: () => import('./chats.bench.js'),
};

async function main(): Promise<void> {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
    process.exit(2);
  }
  const all: BenchResult[] = [];
  for (const name of names.length ? names : Object.keys(BENCHES)) {
    process.stdout.write(`\n== ${name}\n`);
    const started = performance.now();
    const results = await (await BENCHES[name]!()).run();
    printResults(results);
    process.stdout.write(`(${name}: ${Math.round((performance.now() - started) / 1000)} s)\n`);
    all.push(...results);
  }
  mkdirSync('.bench-results', { recursive: true });
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version };
  writeFileSync('.bench-results/latest.json', JSON.stringify({ date: new Date().toISOString(), machine, results: all }, null, 2));
}

await main();
