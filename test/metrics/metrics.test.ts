// GET /metrics of a live daemon after real traffic (sandbox sessions, a send, an inbound message, a dropped
// connection, webhooks that succeed, fail and wait): the values follow what happened, and every metric and label the
// shipped Grafana dashboard (config/grafana-dashboard.json) queries is there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pairedSession, ROOT, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { scrape, valueOf, type Sample } from '../helpers/prometheus.js';
import { FAILURE_REASONS } from '../../src/engine/server-acks.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let daemon: TestDaemon;
let receiver: Receiver;
let samples: Sample[];

before(async () => {
  receiver = await startReceiver();
  receiver.answer = (delivery) => (delivery.path.startsWith('/fail') || delivery.path.startsWith('/slow') ? 500 : 200);
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  const hook = async (path: string, retries: object, events: string[] = []) =>
    assert.equal((await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}${path}`, events, retries })).status, 201);
  await hook('/ok', { attempts: 0, delaySeconds: 0 });
  // fails for good after two quick retries
  await hook('/fail', { attempts: 2, delaySeconds: 1, policy: 'constant' }, ['session.connected']);
  // fails once, then waits an hour: its deliveries stay pending (the backlog)
  await hook('/slow', { attempts: 3, delaySeconds: 3600 }, ['session.connected']);

  await pairedSession(daemon, 'alpha', '+15550008001');
  await pairedSession(daemon, 'beta', '+15550008002');
  assert.equal((await daemon.request('POST', '/api/messages/send', { session: 'alpha', chatId: '+15550008002', type: 'text', text: 'hello beta' })).status, 200);
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/alpha/inbound', { from: '+15550009001', type: 'text', text: 'hi alpha' })).status, 200);
  assert.equal((await daemon.request('POST', '/api/sandbox/sessions/beta/disconnect', { reason: 'AUTO_RECONNECT' })).status, 200);
  await waitFor(async () => (await daemon.request('GET', '/api/sessions/beta')).body.data.status === 'CONNECTED', 15_000, 'beta to reconnect');
  assert.equal((await daemon.request('GET', '/api/no-such-route')).status, 404);
  // three session.connected (alpha, beta, beta again): on /fail 3 attempts each, then failed for good
  await receiver.waitForCount(9, '/fail', 30_000);
  samples = await waitFor(async () => {
    const now = await scrape(daemon.url, daemon.masterKey);
    return valueOf(now, 'gateway_webhook_delivery_attempts_count', { outcome: 'failed' }) === 3 && valueOf(now, 'gateway_webhook_backlog') === 3 ? now : undefined;
  }, 15_000, 'the failed deliveries to be counted, and only /slow left pending');
});
after(async () => {
  await daemon?.cleanup();
  await receiver?.close();
});

describe('GET /metrics after traffic', () => {
  test('sessions by engine and state, reconnects, messages in and out, events by type', () => {
    assert.equal(valueOf(samples, 'gateway_sessions_by_state', { engine: 'sandbox', state: 'CONNECTED', reason: 'none' }), 2);
    assert.equal(valueOf(samples, 'gateway_sessions_by_state', { engine: 'baileys', state: 'CONNECTED' }), 0);
    assert.equal(valueOf(samples, 'gateway_sessions', { state: 'connected' }), 2);
    assert.equal(valueOf(samples, 'gateway_session_reconnects_total', { engine: 'sandbox', reason: 'AUTO_RECONNECT' }), 1);
    // alpha's send is out; beta receiving it and alpha's virtual contact are in
    assert.equal(valueOf(samples, 'gateway_messages_total', { direction: 'out' }), 1);
    assert.equal(valueOf(samples, 'gateway_messages_total', { direction: 'in' }), 2);
    assert.equal(valueOf(samples, 'gateway_events_total', { event: 'message.sent' }), 1);
  });

  test('failed sends by reason: every reason a series from 0', () => {
    const failed = samples.filter((s) => s.name === 'gateway_messages_failed_total');
    assert.deepEqual(failed.map((s) => s.labels.reason).sort(), [...FAILURE_REASONS].sort());
    assert.ok(failed.every((s) => s.value === 0), JSON.stringify(failed));
  });

  test('HTTP duration by route pattern, never the raw path; unknown paths under one label', () => {
    const durations = samples.filter((s) => s.name === 'gateway_http_request_duration_seconds_count');
    assert.ok(valueOf(samples, 'gateway_http_request_duration_seconds_count', { method: 'GET', route: '/api/sessions/:session' }) >= 2);
    assert.ok(valueOf(samples, 'gateway_http_request_duration_seconds_count', { method: 'POST', route: '/api/sandbox/sessions/:session/pair' }) === 2);
    assert.equal(valueOf(samples, 'gateway_http_request_duration_seconds_count', { method: '*', route: 'unmatched' }), 1);
    assert.ok(durations.every((s) => !/alpha|beta|no-such-route/.test(s.labels.route!)), JSON.stringify(durations.map((s) => s.labels.route)));
    const send = { method: 'POST', route: '/api/messages/send' };
    assert.equal(valueOf(samples, 'gateway_http_request_duration_seconds_bucket', { ...send, le: '+Inf' }), 1);
    assert.ok(valueOf(samples, 'gateway_http_request_duration_seconds_sum', send) > 0);
  });

  test('webhook attempts and their duration by outcome, attempts per delivery, the backlog and its age', () => {
    assert.ok(valueOf(samples, 'gateway_webhook_attempts_total', { outcome: 'succeeded' }) >= 5);
    assert.ok(valueOf(samples, 'gateway_webhook_attempts_total', { outcome: 'retry' }) >= 4);
    assert.ok(valueOf(samples, 'gateway_webhook_attempt_duration_seconds_count', { outcome: 'succeeded' }) >= 5);
    assert.ok(valueOf(samples, 'gateway_webhook_attempt_duration_seconds_count', { outcome: 'retry' }) >= 4);
    // a delivery that failed for good took 3 attempts: counted in the bucket le=3, not le=2
    const failed = valueOf(samples, 'gateway_webhook_delivery_attempts_count', { outcome: 'failed' });
    assert.equal(failed, 3);
    assert.equal(valueOf(samples, 'gateway_webhook_delivery_attempts_bucket', { outcome: 'failed', le: '3' }), failed);
    assert.equal(valueOf(samples, 'gateway_webhook_delivery_attempts_bucket', { outcome: 'failed', le: '2' }), 0);
    assert.equal(valueOf(samples, 'gateway_webhook_delivery_attempts_sum', { outcome: 'failed' }), 3 * failed);
    // /slow holds one pending delivery per session.connected (3), retried in an hour
    assert.equal(valueOf(samples, 'gateway_webhook_backlog'), 3);
    assert.ok(valueOf(samples, 'gateway_webhook_oldest_pending_age_seconds') > 0);
  });

  test('SQLite commit time and event-loop lag', () => {
    assert.ok(valueOf(samples, 'gateway_sqlite_commit_duration_seconds_count') > 0);
    assert.ok(valueOf(samples, 'gateway_sqlite_commit_duration_seconds_sum') > 0);
    assert.ok(samples.some((s) => s.name === 'gateway_nodejs_eventloop_lag_p99_seconds'));
  });
});

/** Labels Prometheus adds when it scrapes (not in /metrics), and the bucket label. */
const SCRAPE_LABELS = new Set(['instance', 'job', 'le']);
const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names and label names one PromQL expression uses (label matchers, and by/without/on/ignoring lists). */
function promqlNames(expr: string): { metrics: string[]; labels: string[] } {
  const labels = new Set<string>();
  let rest = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  rest = rest.replace(/\{([^}]*)\}/g, (_, inner: string) => {
    for (const [, name] of inner.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) labels.add(name!);
    return ' ';
  });
  rest = rest.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, list: string) => {
    for (const name of list.split(',').map((l) => l.trim()).filter(Boolean)) labels.add(name);
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  const metrics = [...rest.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?!\s*\(|[a-zA-Z0-9_:])/g)]
    .map((m) => m[0])
    .filter((name) => !PROMQL_WORDS.has(name.toLowerCase()) && !/^\d/.test(name));
  return { metrics: [...new Set(metrics)], labels: [...labels].filter((l) => !SCRAPE_LABELS.has(l)) };
}

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'config', 'grafana-dashboard.json'), 'utf8'));
  const panels = (list: any[]): any[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  const expressions: string[] = [
    ...panels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t: { expr: string }) => t.expr)),
    ...dashboard.templating.list.filter((v: any) => v.type === 'query').map((v: any) => v.definition as string),
  ];

  test('the expression reader finds metric and label names', () => {
    assert.deepEqual(promqlNames('histogram_quantile(0.95, sum by (le, route) (rate(gateway_x_bucket{instance=~"$i",state!="A"}[5m])))'), {
      metrics: ['gateway_x_bucket'],
      labels: ['state', 'route'],
    });
    assert.deepEqual(promqlNames('sum(rate(a_sum[5m])) / sum(rate(a_count[5m])) * 60 > 0'), { metrics: ['a_sum', 'a_count'], labels: [] });
    assert.deepEqual(promqlNames('label_values(gateway_sessions, instance)'), { metrics: ['gateway_sessions', 'instance'], labels: [] });
  });

  test('every metric it queries is served, with the labels it selects and groups by', () => {
    assert.ok(expressions.length >= 25, `${expressions.length} expressions`);
    const problems: string[] = [];
    for (const expr of expressions) {
      // label_values(metric, label): the second argument is a label, not a metric
      const { metrics, labels } = promqlNames(expr.replace(/^label_values\(([^,]+),\s*(\w+)\)$/, '$1{$2=""}'));
      assert.ok(metrics.length > 0, `no metric found in ${expr}`);
      for (const metric of metrics) {
        const served = samples.filter((s) => s.name === metric);
        if (!served.length) {
          problems.push(`${metric} (in ${expr}) is not served`);
          continue;
        }
        for (const label of labels) if (!served.some((s) => label in s.labels)) problems.push(`${metric} has no label ${label} (in ${expr})`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
