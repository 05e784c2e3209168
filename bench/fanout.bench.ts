// Webhook fan-out under an inbound burst: 20,000 sandbox messages (BENCH_FANOUT_MESSAGES) to a session with 100 webhooks
// (the default cap, BENCH_FANOUT_WEBHOOKS) on a host that refuses every connection, so every event becomes one outbox row
// per webhook and every attempt fails. Meanwhile a probe asks GET /api/health one request at a time: its latency during
// the burst against the same probe on the same daemon before the burst, and how long the burst took to be ingested.
import { request } from 'undici';
import type { BenchResult } from './types.js';
import { MASTER_KEY } from '../test/helpers/daemon.js';
import { benchDaemon, pairedSession } from './support/gateway.js';
import { percentile, result, round } from './support/report.js';

const MESSAGES = Number(process.env.BENCH_FANOUT_MESSAGES ?? 20_000);
const WEBHOOKS = Number(process.env.BENCH_FANOUT_WEBHOOKS ?? 100);
const IDLE_PROBE_MS = 3000;
const AFTER_PROBE_MS = 10_000;

/** GET /api/health one at a time until `until` settles (or for `ms`): each answer's latency, and any non-200. */
async function probe(url: string, until: Promise<unknown> | number): Promise<{ latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let done = false;
  if (typeof until === 'number') setTimeout(() => (done = true), until);
  else void until.finally(() => (done = true));
  while (!done) {
    const started = performance.now();
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(60_000) });
      await res.arrayBuffer();
      if (res.status !== 200) failures += 1;
    } catch {
      failures += 1;
    }
    latencies.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 5));
  }
  return { latencies: latencies.sort((a, b) => a - b), failures };
}

export async function run(): Promise<BenchResult[]> {
  const daemon = await benchDaemon({ config: 'webhooks:\n  allowPrivateTargets: true\n' });
  try {
    await pairedSession(daemon, 'a', '+15550920001');
    for (let i = 0; i < WEBHOOKS; i += 1) {
      const res = await daemon.request('POST', '/api/webhooks', { url: `http://127.0.0.1:9/hook-${i}`, events: ['message.received'] });
      if (res.status !== 201) throw new Error(`webhook ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const idle = await probe(daemon.url, IDLE_PROBE_MS);
    const started = performance.now();
    // the burst may take minutes on a loaded machine: longer than the test client's own timeout
    const burst = request(`${daemon.url}/api/sandbox/sessions/a/inbound/burst`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ count: MESSAGES }),
      headersTimeout: 0,
      bodyTimeout: 0,
    }).then(async (res) => ({ status: res.statusCode, body: await res.body.text() }));
    const busy = await probe(daemon.url, burst);
    const answer = await burst;
    // the deliveries of a burst's later events are written after it, a chunk at a time, while the attempts go on
    const afterwards = await probe(daemon.url, AFTER_PROBE_MS);
    if (answer.status !== 200) throw new Error(`burst: ${answer.status} ${answer.body}`);
    const seconds = (performance.now() - started) / 1000;
    const metrics = (await daemon.request('GET', '/metrics')).body as string;
    const pending = Number(/gateway_webhook_backlog (\d+)/.exec(metrics)?.[1] ?? NaN);
    const label = `${MESSAGES} messages × ${WEBHOOKS} webhooks`;
    process.stdout.write(
      `fanout: burst ${round(seconds, 1)} s, ${busy.latencies.length} health probes during it (${busy.failures} not 200), ` +
        `max ${round(busy.latencies.at(-1) ?? 0)} ms, outbox backlog after it ${pending}\n`,
    );
    return [
      result('fanout', `GET /api/health p50 ms during a burst of ${label} vs idle`, round(percentile(busy.latencies, 50)), round(percentile(idle.latencies, 50)), 'ms'),
      result('fanout', `GET /api/health p99 ms during a burst of ${label} vs idle`, round(percentile(busy.latencies, 99)), round(percentile(idle.latencies, 99)), 'ms'),
      result('fanout', `GET /api/health max ms during a burst of ${label} vs idle`, round(busy.latencies.at(-1) ?? 0), round(idle.latencies.at(-1) ?? 0), 'ms'),
      result('fanout', `GET /api/health p99 ms in the ${AFTER_PROBE_MS / 1000} s after the burst (its deliveries written, attempts failing) vs idle`, round(percentile(afterwards.latencies, 99)), round(percentile(idle.latencies, 99)), 'ms'),
      result('fanout', `health probes not answered 200 during the burst (of ${busy.latencies.length})`, busy.failures, 0, 'requests'),
      result('fanout', `burst of ${label} ingested, s (vs the same burst's messages at 1 ms each)`, round(seconds, 1), round(MESSAGES / 1000, 1), 's'),
    ];
  } finally {
    await daemon.cleanup();
  }
}
