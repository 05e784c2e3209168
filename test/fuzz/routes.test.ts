// The route fuzz inside `npm test`: a fixed seed and a bounded count over every route (see test/fuzz/harness.ts).
// Long runs: `npm run fuzz -- --runs N --seed S`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fuzzer, runFuzz } from './harness.js';

const SEED = 16_016;
const RUNS = 3000;

let fuzzer: Fuzzer;
before(async () => {
  fuzzer = await Fuzzer.start();
});
after(async () => {
  await fuzzer?.close();
});

test(`${RUNS} generated requests over every route: no 5xx, no hang, every error in the documented shape`, async () => {
  const failure = await runFuzz(fuzzer, { seed: SEED, numRuns: RUNS });
  assert.equal(failure, undefined, failure);
  assert.equal(fuzzer.stats.fiveXx, 0);
  assert.equal(fuzzer.stats.hangs, 0);
});

test('afterwards the daemon is healthy, a valid send works, nothing polluted a prototype, nothing logged "request failed"', async () => {
  assert.deepEqual(await fuzzer.finalChecks(), []);
});
