// `npm run fuzz -- --runs N --seed S [--path P]`: a long fuzz run against one daemon; prints its figures, and on a
// failure the seed, path and shrunk request so `--seed S --path P` replays it.
// `npm run fuzz -- --positive --runs N --seed S`: requests the document allows (test/fuzz/positive.ts); prints the
// drift (400 VALIDATION_FAILED outside the documented rules) and fails when there is any.
import { Fuzzer, parseArgs, runFuzz } from './harness.js';
import { runPositive } from './positive.js';

const args = process.argv.slice(2);
const options = parseArgs(args.filter((a) => a !== '--positive'), { runs: 10_000, seed: Date.now() % 2 ** 31 });
const fuzzer = await Fuzzer.start();
if (args.includes('--positive')) {
  const started = Date.now();
  const stats = await runPositive(fuzzer, { numRuns: options.numRuns, seed: options.seed });
  const { drifts, byOperation, ...figures } = stats;
  console.log(JSON.stringify({ seed: options.seed, runs: options.numRuns, ...figures, operations: Object.keys(byOperation).length, drift: drifts.length, seconds: Number(((Date.now() - started) / 1000).toFixed(1)) }, null, 2));
  for (const drift of drifts) console.error(`drift ${drift.operationId}: ${drift.request}\n  → ${drift.answer}`);
  await fuzzer.close();
  process.exit(drifts.length || fuzzer.stats.fiveXx ? 1 : 0);
}
let failed = false;
const started = Date.now();
const progress = setInterval(() => {
  const s = fuzzer.stats;
  process.stderr.write(`… ${s.requests} requests, ${s.fiveXx} 5xx, ${s.hangs} hangs, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}, 30_000);
const failure = await runFuzz(fuzzer, options);
if (failure) {
  failed = true;
  console.error(failure);
}
clearInterval(progress);
const problems = await fuzzer.finalChecks().catch((err: Error) => [`final checks failed: ${err.message}`]);
for (const p of problems) console.error(`final check: ${p}`);
const s = fuzzer.stats;
const seconds = (Date.now() - started) / 1000;
console.log(JSON.stringify({ seed: options.seed, runs: options.numRuns, requests: s.requests, fiveXx: s.fiveXx, hangs: s.hangs, seconds: Number(seconds.toFixed(1)), requestsPerSecond: Math.round(s.requests / seconds), slowestMs: Math.round(s.maxMs), byStatus: s.byStatus }, null, 2));
if (process.env.FUZZ_REACH) {
  for (const [route, row] of Object.entries(s.reach).sort()) {
    if (!Object.keys(row).some((status) => status.startsWith('2'))) console.log('not reached:', route, JSON.stringify(row));
  }
}
await fuzzer.close();
process.exit(failed || problems.length ? 1 : 0);
