// Result helpers: build a BenchResult, print a table of results and one JSON line each.
import type { BenchResult } from '../types.js';

export function result(bench: string, metric: string, value: number, baseline: number, unit: string): BenchResult {
  return { bench, metric, value: round(value), baseline: round(baseline), ratio: baseline ? round(value / baseline, 3) : 0, unit };
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function printResults(results: BenchResult[]): void {
  const rows = results.map((r) => [r.bench, r.metric, `${r.value} ${r.unit}`, `${r.baseline} ${r.unit}`, String(r.ratio)]);
  const head = ['bench', 'metric', 'value', 'baseline', 'ratio'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(`${line(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
  for (const r of results) process.stdout.write(`${JSON.stringify(r)}\n`);
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
