// Writes docs/BENCHMARKS.md from .bench-results/latest.json (the last `npm run bench`), so published figures trace to a run.
import { readFileSync, writeFileSync } from 'node:fs';
import type { BenchResult } from './types.js';

interface Run {
  date: string;
  machine: { cpus: number; cpuModel?: string; memoryGb: number; node: string };
  results: BenchResult[];
}

/** Targets by bench and the start of the metric's name (counts in names may change with BENCH_* settings). */
const TARGETS: Array<[bench: string, metricStart: string, target: string]> = [
  ['send', 'requests/s (API key vs bare Koa)', 'ratio ≥ 0.60 (issue 7: blocked, see above)'],
  ['send', 'p99 latency ms', 'value ≤ 25 ms'],
  ['send', 'floor:', 'ratio ≥ 0.85 (issue 18)'],
  ['send', 'ceiling:', 'none: the most a send can show here'],
  ['send', 'durable ceiling:', 'none: the least DESIGN §4 costs here'],
  ['send', 'requests/s, all webhook POSTs arrived (API key vs that ceiling)', 'ratio ≥ 0.65 (issue 18; see the durable ceiling)'],
  ['send', 'requests/s, all webhook POSTs arrived', 'none: reported'],
  ['send', 'CPU µs per request in the server (API key vs ceiling', 'ratio ≤ 1.6 (issue 18; see the durable ceiling)'],
  ['send', 'CPU µs per request', 'none: where the cores go'],
  ['token-send', 'requests/s (client token vs API key)', 'ratio ≥ 0.90'],
  ['governor', 'daemon CPU µs per send', 'ratio ≤ 1.05 (issue 31)'],
  ['governor', 'sends/s', 'none: reported'],
  ['webhooks', 'deliveries/s sustained, outcome recorded (vs that durable', 'none: reported'],
  ['webhooks', 'deliveries/s sustained', 'ratio ≥ 0.75 (issue 18; see the durable bare loop)'],
  ['webhooks', 'durable bare loop:', 'none: the least DESIGN §4 costs here'],
  ['webhooks', 'p99 latency event→receiver', 'value ≤ 10 ms (issue 18)'],
  ['inbound', 'stream of', 'value ≥ 20,000 msg/s'],
  ['inbound', 'history sync of', 'value ≥ 20,000 msg/s'],
  ['inbound', 'RSS MB after 4 bursts', 'ratio ≈ 1 (bounded)'],
  ['inbound', 'JS heap in use MB after 4 bursts', 'ratio ≈ 1 (bounded)'],
  ['sessions', 'daemon start to', 'value ≤ 3,000 ms'],
  ['sessions', 'RSS per idle sandbox session', 'value ≤ 1024 KB'],
  ['startup', 'empty daemon: spawn to', 'value ≤ 400 ms'],
  ['baileys-scale', 'RSS per connected Baileys session, MB: (', 'value ≤ 3 MB'],
  ['baileys-scale', 'daemon start to', 'value ≤ 20,000 ms'],
  ['baileys-scale', 'peak connection attempts', 'value ≤ restoreRatePerSecond'],
  ['startup', 'empty daemon: RSS', 'value ≤ 90 MB'],
  ['overload', 'p99 ms of', 'ratio: reported (issue 16: within their p99)'],
  ['overload', 'share of those sends answered 2xx', 'value ≈ 1 (another key floods, not this one)'],
  ['media', '70 MB base64 image send: wall ms', 'value ≤ 3,000 ms'],
  ['media', '70 MB base64 image send: daemon peak RSS', 'ratio ≤ 2.5'],
  ['media', '50 MB document by URL: daemon peak RSS growth MB, worst round (vs the file', 'ratio ≤ 1.5'],
];
const targetOf = (r: BenchResult) => TARGETS.find(([bench, start]) => r.bench === bench && r.metric.startsWith(start))?.[2] ?? '';

const run = JSON.parse(readFileSync('.bench-results/latest.json', 'utf8')) as Run;
const rows = run.results
  .map((r) => `| ${r.bench} | ${r.metric} | ${r.value} ${r.unit} | ${r.baseline} ${r.unit} | ${r.ratio} | ${targetOf(r)} |`)
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
