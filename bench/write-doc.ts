// Writes docs/BENCHMARKS.md from .bench-results/latest.json (the last `npm run bench`), so published figures trace to a run.
import { readFileSync, writeFileSync } from 'node:fs';
import type { BenchResult } from './types.js';

interface Run {
  date: string;
  machine: { cpus: number; cpuModel?: string; memoryGb: number; node: string };
  results: BenchResult[];
}

const TARGETS: Record<string, string> = {
  'send:requests/s (API key vs bare Koa)': 'ratio ≥ 0.60',
  'send:p99 latency ms (API key vs bare Koa; lower is better)': 'value ≤ 25 ms',
  'token-send:requests/s (client token vs API key)': 'ratio ≥ 0.90',
  'webhooks:deliveries/s sustained, outcome recorded (2 alternating rounds of 30000; 16 in flight on both sides: default per-webhook concurrency)':
    'value ≥ 5,000 and ratio ≥ 0.50',
  'webhooks:p99 latency event→receiver at 1000/s (lower is better)': 'value ≤ 50 ms',
  'inbound:stream of 100000 single messages: messages/s vs bare SQLite inserts': 'value ≥ 20,000 msg/s',
  'inbound:history sync of 100000 messages: messages/s vs bare SQLite inserts': 'value ≥ 20,000 msg/s',
  'inbound:RSS MB after 4 bursts of 100000 in one daemon vs after the first (1.0 = nothing retained)': 'ratio ≈ 1 (bounded)',
  'sessions:daemon start to 1000 sessions CONNECTED, ms (incl. process start; lower is better)': 'value ≤ 3,000 ms',
  'sessions:RSS per idle sandbox session, KB, upper bound (vs the 1 MB target)': 'value ≤ 1024 KB',
};

const run = JSON.parse(readFileSync('.bench-results/latest.json', 'utf8')) as Run;
const rows = run.results
  .map((r) => `| ${r.bench} | ${r.metric} | ${r.value} ${r.unit} | ${r.baseline} ${r.unit} | ${r.ratio} | ${TARGETS[`${r.bench}:${r.metric}`] ?? ''} |`)
  .join('\n');

const intro = readFileSync(new URL('../../bench/BENCHMARKS.intro.md', import.meta.url), 'utf8');
writeFileSync(
  'docs/BENCHMARKS.md',
  `${intro.trim()}

## Latest figures

Run on ${run.date.slice(0, 10)}: ${run.machine.cpus} × ${run.machine.cpuModel ?? 'CPU'}, ${run.machine.memoryGb} GiB, Node ${run.machine.node}.
Command: \`npm run bench && node dist/bench/write-doc.js\`.

| bench | metric | value | baseline (same run) | ratio | target |
|---|---|---|---|---|---|
${rows}
`,
);
process.stdout.write('wrote docs/BENCHMARKS.md\n');
