// `npm run fuzz -- --runs N --seed S [--path P]`: a long fuzz run against one daemon; prints its figures, and on a
// failure the seed, path and shrunk request so `--seed S --path P` replays it.
import { Fuzzer, parseArgs, runFuzz } from './harness.js';

const options = parseArgs(process.argv.slice(2), { runs: 10_000, seed: Date.now() % 2 ** 31 });
const fuzzer = await Fuzzer.start();
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
