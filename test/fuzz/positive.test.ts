// The positive fuzz inside `npm test`: schema-valid requests generated from the OpenAPI document, a fixed seed and a
// bounded count; any 400 VALIDATION_FAILED outside the documented rules beyond the schema is drift (see positive.ts).
// Long runs: `npm run fuzz -- --positive --runs N --seed S`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fuzzer } from './harness.js';
import { runPositive } from './positive.js';

const SEED = 28_028;
const RUNS = 1500;

let fuzzer: Fuzzer;
before(async () => {
  fuzzer = await Fuzzer.start();
});
after(async () => {
  await fuzzer?.close();
});

test(`${RUNS} requests the document allows: none is refused 400 VALIDATION_FAILED but by a documented rule`, async (t) => {
  const stats = await runPositive(fuzzer, { seed: SEED, numRuns: RUNS });
  t.diagnostic(JSON.stringify({ sent: stats.sent, notValid: stats.notValid, documentedRule: stats.documentedRule, byStatus: stats.byStatus, operations: Object.keys(stats.byOperation).length }));
  assert.deepEqual(stats.drifts, [], JSON.stringify(stats.drifts, null, 2));
  // the generator must mostly produce what the document accepts, and every operation must be exercised
  assert.ok(stats.sent >= RUNS * 0.8, `only ${stats.sent} of ${RUNS} generated requests were valid against the document (${stats.notValid} not)`);
  assert.ok(Object.keys(stats.byOperation).length >= 100, `operations reached: ${Object.keys(stats.byOperation).length}`);
  assert.equal(fuzzer.stats.fiveXx, 0);
});
