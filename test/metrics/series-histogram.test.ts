// SeriesHistogram renders exactly what prom-client's own Histogram renders for the same observations, and hides
// series nothing was observed in unless asked to show them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { SeriesHistogram } from '../../src/metrics.js';
import { parseExposition } from '../helpers/prometheus.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVATIONS: Array<[string, string, number]> = [
  ['GET', '/api/health', 0.0004],
  ['GET', '/api/health', 0.001],
  ['GET', '/api/health', 0.02],
  ['POST', '/api/sessions/:session/start', 0.5],
  ['POST', '/api/sessions/:session/start', 7],
];

const sorted = (text: string) =>
  parseExposition(text)
    .map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())} ${s.value}`)
    .sort();

test('the same samples as prom-client Histogram', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new SeriesHistogram({ name: 'h_seconds', help: 'h', labelNames: ['method', 'route'], buckets: BUCKETS, emitEmpty: false, registers: [ours] });
  const reference = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [theirs] });
  for (const [method, route, value] of OBSERVATIONS) {
    histogram.series(method, route).observe(value);
    reference.observe({ method, route }, value);
  }
  const text = await ours.metrics();
  assert.deepEqual(sorted(text), sorted(await theirs.metrics()));
  assert.match(text, /^# TYPE h_seconds histogram$/m);
  assert.match(text, /^h_seconds_bucket\{method="GET",route="\/api\/health",le="0.001"\} 2$/m);
  assert.match(text, /^h_seconds_bucket\{method="POST",route="\/api\/sessions\/:session\/start",le="\+Inf"\} 2$/m);
});

test('a series taken twice is one series; unused series show only with emitEmpty', async () => {
  const registry = new Registry();
  const hidden = new SeriesHistogram({ name: 'hidden_seconds', help: 'h', labelNames: ['route'], buckets: BUCKETS, emitEmpty: false, registers: [registry] });
  const shown = new SeriesHistogram({ name: 'shown_seconds', help: 's', labelNames: ['outcome'], buckets: BUCKETS, emitEmpty: true, registers: [registry] });
  hidden.series('/a');
  hidden.series('/b').observe(0.5);
  hidden.series('/b').observe(0.5);
  shown.series('failed');
  const samples = parseExposition(await registry.metrics());
  assert.deepEqual(samples.filter((s) => s.name === 'hidden_seconds_count').map((s) => [s.labels.route, s.value]), [['/b', 2]]);
  assert.deepEqual(samples.filter((s) => s.name === 'shown_seconds_count').map((s) => [s.labels.outcome, s.value]), [['failed', 0]]);
  assert.throws(() => hidden.series('/a', 'extra'), /takes 1 label values/);
  registry.resetMetrics();
  assert.equal(parseExposition(await registry.metrics()).filter((s) => s.name === 'hidden_seconds_count').length, 0);
});
