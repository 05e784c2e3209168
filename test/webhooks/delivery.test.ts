// Webhook delivery end to end: a real daemon (child process) posting to a real receiver on 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import { openDaemonDb } from '../helpers/daemon-db.js';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents } from '../helpers/events.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { verifySignature, verifySignature256, verifyTimestampedSignature } from '../../src/webhooks/signer.js';

/** QR codes rotate rarely here, so the events each step produces are exactly known. */
const CONFIG = 'sessions:\n  qrRotationSeconds: 600\n';

let daemon: TestDaemon;
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
  daemon = await startDaemon({ config: CONFIG, env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(async () => {
  await daemon?.cleanup();
  await receiver?.close();
});

/** what the retry policy test saw, re-checked at the end of the suite once every would-be fifth try is due */
let retryPolicyRun: { lastTry: Record<string, number>; hookIds: number[] } | undefined;

const DAY_MS = 86_400_000;

const hmac = (key: string, raw: Buffer) => createHmac('sha256', key).update(raw).digest('hex');

async function createWebhook(d: TestDaemon, body: Record<string, unknown>): Promise<{ id: number; hmacKey: string }> {
  const res = await d.request('POST', '/api/webhooks', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

async function deliveries(d: TestDaemon, id: number, query = ''): Promise<any[]> {
  const res = await d.request('GET', `/api/webhooks/${id}/deliveries${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** Waits until the webhook's delivery log satisfies `check`. */
const logUntil = (d: TestDaemon, id: number, check: (rows: any[]) => boolean, what: string, timeoutMs = 10_000) =>
  waitFor(async () => {
    const rows = await deliveries(d, id);
    return check(rows) ? rows : undefined;
  }, timeoutMs, what);

describe('webhook delivery', () => {
  test('envelope, headers and signature: the HMAC of the raw body, computed independently, matches', async () => {
    const events = await collectEvents(daemon, 'session=sig1&events=session.status');
    const hmacKey = 'a-test-key-of-enough-length-0123';
    const webhook = await createWebhook(daemon, {
      url: `${receiver.base}/sig`,
      events: ['session.status'],
      session: 'sig1',
      hmacKey,
      headers: [
        { name: 'Authorization', value: 'Bearer receiver-token' },
        { name: 'X-Tenant', value: 'acme' },
      ],
    });
    const sent = Date.now();
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'sig1', start: true })).status, 201);
    const [delivery] = await receiver.waitForCount(1, '/sig');
    const event = await events.next((e) => e.event === 'session.status');
    events.close();
    const d = delivery!;

    assert.equal(d.headers['x-webhook-signature'], hmac(hmacKey, d.raw));
    assert.match(String(d.headers['x-webhook-signature']), /^[0-9a-f]{64}$/);
    assert.equal(d.headers['content-type'], 'application/json');
    assert.equal(d.headers.authorization, 'Bearer receiver-token');
    assert.equal(d.headers['x-tenant'], 'acme');
    assert.equal(d.headers['x-webhook-event'], 'session.status');
    assert.equal(d.headers['x-webhook-attempt'], '1');
    const stamp = Number(d.headers['x-webhook-timestamp']);
    assert.ok(Number.isInteger(stamp) && Math.abs(stamp - sent / 1000) < 30, `X-Webhook-Timestamp ${stamp}`);

    assert.deepEqual(Object.keys(d.json), ['id', 'event', 'session', 'seq', 'timestamp', 'payload']);
    assert.equal(d.json.id, d.headers['x-webhook-id']);
    assert.match(d.json.id, /^[0-9a-f-]{36}$/);
    assert.notEqual(d.json.id, event.id, 'the envelope id is the delivery id, not the event id');
    assert.equal(d.json.event, 'session.status');
    assert.equal(d.json.session, 'sig1');
    assert.equal(d.json.timestamp, event.timestamp);
    assert.deepEqual(d.json.payload, event.payload);
    assert.equal(d.json.payload.status, 'CONNECTING');

    const [row] = await logUntil(daemon, webhook.id, (rows) => rows[0]?.status === 'succeeded', 'the delivery to succeed');
    assert.equal(row.id, d.json.id);
    assert.equal(row.eventId, event.id);
    assert.equal(row.attempts, 1);
    assert.equal(row.lastStatusCode, 200);
    assert.equal(row.lastError, null);
    assert.equal(row.nextAttemptAt, null);
  });

  test('event and session filters', async () => {
    const connected = await createWebhook(daemon, { url: `${receiver.base}/f-connected`, events: ['session.connected'] });
    await createWebhook(daemon, { url: `${receiver.base}/f-session`, session: 'filt-b' });
    await createWebhook(daemon, { url: `${receiver.base}/f-both`, session: 'filt-c', events: ['session.qr', '*'] });
    await createWebhook(daemon, { url: `${receiver.base}/f-qr-c`, session: 'filt-c', events: ['session.qr'] });
    for (const [name, phone] of [
      ['filt-b', '+15550100001'],
      ['filt-c', '+15550100002'],
    ] as const) {
      await daemon.request('POST', '/api/sessions', { name, start: true });
      await daemon.request('POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber: phone });
    }
    // filt-b: status CONNECTING, qr, connected, status CONNECTED
    const bySession = await receiver.waitForCount(4, '/f-session');
    const connectedOnly = await receiver.waitForCount(2, '/f-connected');
    const qrOnly = await receiver.waitForCount(1, '/f-qr-c');
    const all = await receiver.waitForCount(4, '/f-both');
    await sleep(300);

    assert.deepEqual(bySession.map((d) => d.json.session), ['filt-b', 'filt-b', 'filt-b', 'filt-b']);
    assert.deepEqual(bySession.map((d) => d.json.event).sort(), ['session.connected', 'session.qr', 'session.status', 'session.status']);
    assert.deepEqual(connectedOnly.map((d) => `${d.json.session}:${d.json.event}`).sort(), ['filt-b:session.connected', 'filt-c:session.connected']);
    assert.deepEqual(qrOnly.map((d) => `${d.json.session}:${d.json.event}`), ['filt-c:session.qr']);
    assert.ok(all.every((d) => d.json.session === 'filt-c'));
    assert.equal(all.length, 4, '["session.qr", "*"] means every event');
    const log = await deliveries(daemon, connected.id);
    assert.equal(log.length, 2);
  });

  test('retry policies: spacing with delaySeconds 1 and attempts 3, exactly 4 tries, then failed', async () => {
    receiver.answer = (d) => (d.path.startsWith('/retry-') ? 500 : 200);
    const policies = ['constant', 'linear', 'exponential'] as const;
    const hooks = await Promise.all(
      policies.map((policy) =>
        createWebhook(daemon, {
          url: `${receiver.base}/retry-${policy}`,
          session: 'retry',
          events: ['session.status'],
          retries: { attempts: 3, delaySeconds: 1, policy },
        }),
      ),
    );
    await daemon.request('POST', '/api/sessions', { name: 'retry', start: true });
    // seconds between tries 1→2, 2→3, 3→4; the three policies run at the same time (about 7 s in all)
    const expected = { constant: [1, 1, 1], linear: [1, 2, 3], exponential: [1, 2, 4] };
    const lastTry: Record<string, number> = {};
    await Promise.all(
      policies.map(async (policy, i) => {
        const tries = await receiver.waitForCount(4, `/retry-${policy}`, 15_000);
        const rows = await logUntil(daemon, hooks[i]!.id, (r) => r[0]?.status === 'failed', `${policy} delivery to fail`);
        assert.equal(rows.length, 1);
        const [row] = rows;
        assert.equal(row.attempts, 4);
        assert.equal(row.lastStatusCode, 500);
        assert.equal(row.lastError, 'HTTP 500');
        assert.equal(row.nextAttemptAt, null);
        assert.deepEqual(tries.map((t) => t.headers['x-webhook-attempt']), ['1', '2', '3', '4']);
        assert.ok(tries.every((t) => t.json.id === row.id && t.raw.equals(tries[0]!.raw)), 'every try sends the same delivery, byte for byte');
        const gaps = tries.slice(1).map((t, k) => (t.at - tries[k]!.at) / 1000);
        expected[policy].forEach((want, k) => {
          // never early; late by up to 0.75 s on a loaded machine (still short of the next policy's spacing)
          assert.ok(gaps[k]! >= want - 0.15 && gaps[k]! <= want + 0.75, `${policy} gaps ${gaps.map((g) => g.toFixed(2)).join(', ')} s, expected ${expected[policy].join(', ')} s`);
        });
        lastTry[policy] = tries[3]!.at;
      }),
    );
    // a fifth try would come 1 s (constant) after the fourth: wait past that, with the failed rows showing nothing scheduled
    await sleep(Math.max(300, lastTry.constant! + 1600 - Date.now()));
    for (const policy of policies) assert.equal(receiver.on(`/retry-${policy}`).length, 4, `${policy}: no try after the fourth`);
    retryPolicyRun = { lastTry, hookIds: hooks.map((h) => h.id) };
  });

  test('a 2xx answer stops the retries', async () => {
    receiver.answer = (d, index) => (d.path === '/two-xx' ? (index === 0 ? 503 : 201) : 200);
    const webhook = await createWebhook(daemon, {
      url: `${receiver.base}/two-xx`,
      session: 'twoxx',
      events: ['session.status'],
      retries: { attempts: 5, delaySeconds: 0, policy: 'constant' },
    });
    await daemon.request('POST', '/api/sessions', { name: 'twoxx', start: true });
    await receiver.waitForCount(2, '/two-xx');
    const [row] = await logUntil(daemon, webhook.id, (r) => r[0]?.status === 'succeeded', 'success after one retry');
    await sleep(300);
    assert.equal(receiver.on('/two-xx').length, 2);
    assert.equal(row.attempts, 2);
    assert.equal(row.lastStatusCode, 201);
    assert.equal(row.lastError, null);
  });

  test('a disabled webhook gets nothing; disabling fails its pending deliveries; retry re-sends with a fresh budget', async () => {
    const disabled = await createWebhook(daemon, { url: `${receiver.base}/disabled`, session: 'dis', enabled: false });
    const control = await createWebhook(daemon, { url: `${receiver.base}/dis-control`, session: 'dis', events: ['session.status'] });
    receiver.answer = (d) => (d.path === '/dis-later' ? 500 : 200);
    const later = await createWebhook(daemon, {
      url: `${receiver.base}/dis-later`,
      session: 'dis',
      events: ['session.status'],
      retries: { attempts: 3, delaySeconds: 60, policy: 'constant' },
    });
    await daemon.request('POST', '/api/sessions', { name: 'dis', start: true });
    await receiver.waitForCount(1, '/dis-control');
    await receiver.waitForCount(1, '/dis-later');
    const [pending] = await logUntil(daemon, later.id, (r) => r[0]?.attempts === 1, 'the first try recorded');
    assert.equal(pending.status, 'pending');
    assert.ok(Date.parse(pending.nextAttemptAt) > Date.now() + 30_000);

    const off = await daemon.request('PUT', `/api/webhooks/${later.id}`, { enabled: false });
    assert.equal(off.body.data.enabled, false);
    const [failed] = await deliveries(daemon, later.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.lastError, 'webhook disabled');
    assert.equal(failed.nextAttemptAt, null);

    await daemon.request('POST', '/api/sessions/dis/stop');
    await receiver.waitForCount(2, '/dis-control');
    await sleep(200);
    assert.equal(receiver.on('/disabled').length, 0);
    assert.equal((await deliveries(daemon, disabled.id)).length, 0, 'no delivery rows for a disabled webhook');
    assert.equal(receiver.on('/dis-later').length, 1);
    assert.equal((await deliveries(daemon, later.id)).length, 1, 'nothing recorded while disabled');
    assert.equal((await deliveries(daemon, control.id)).length, 2);

    // enabling again does not resurrect failed rows; retry does, answered 200 now
    await daemon.request('PUT', `/api/webhooks/${later.id}`, { enabled: true });
    receiver.answer = () => 200;
    const retried = await daemon.request('POST', `/api/webhooks/${later.id}/deliveries/${failed.id}/retry`);
    assert.equal(retried.status, 200);
    assert.equal(retried.body.data.status, 'pending');
    const [again] = await receiver.waitForCount(2, '/dis-later').then((list) => list.slice(1));
    assert.equal(again!.json.id, failed.id);
    assert.equal(again!.headers['x-webhook-attempt'], '2');
    const [done] = await logUntil(daemon, later.id, (r) => r[0]?.status === 'succeeded', 'the retried delivery to succeed');
    assert.equal(done.attempts, 2);
    const unknown = await daemon.request('POST', `/api/webhooks/${later.id}/deliveries/nope/retry`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'DELIVERY_NOT_FOUND');
  });

  test('key rotation takes effect for the next delivery and for the next attempt of a pending one', async () => {
    const first = 'first-key-0123456789abcdef';
    const second = 'second-key-0123456789abcdef';
    const third = 'third-key-0123456789abcdef';
    receiver.answer = (d, index) => (d.path === '/rotate' && index === 1 ? 500 : 200);
    const webhook = await createWebhook(daemon, {
      url: `${receiver.base}/rotate`,
      session: 'rot',
      events: ['session.status'],
      hmacKey: first,
      retries: { attempts: 1, delaySeconds: 1, policy: 'constant' },
    });
    await daemon.request('POST', '/api/sessions', { name: 'rot', start: true });
    const [one] = await receiver.waitForCount(1, '/rotate');
    assert.equal(one!.headers['x-webhook-signature'], hmac(first, one!.raw));

    await daemon.request('PUT', `/api/webhooks/${webhook.id}`, { hmacKey: second });
    await daemon.request('POST', '/api/sessions/rot/stop');
    const two = (await receiver.waitForCount(2, '/rotate'))[1]!;
    assert.equal(two.headers['x-webhook-signature'], hmac(second, two.raw));
    assert.notEqual(two.headers['x-webhook-signature'], hmac(first, two.raw));

    // that one was answered 500: rotate again before its retry, which must carry the newest key
    await daemon.request('PUT', `/api/webhooks/${webhook.id}`, { hmacKey: third });
    const retry = (await receiver.waitForCount(3, '/rotate'))[2]!;
    assert.equal(retry.json.id, two.json.id);
    assert.ok(retry.raw.equals(two.raw));
    assert.equal(retry.headers['x-webhook-attempt'], '2');
    assert.equal(retry.headers['x-webhook-signature'], hmac(third, retry.raw));
  });

  test('deleting a webhook lets the attempt in flight finish and drops the rest', async () => {
    receiver.answer = (d) => (d.path === '/held' ? 'hold' : 200);
    const webhook = await createWebhook(daemon, {
      url: `${receiver.base}/held`,
      session: 'held',
      events: ['session.status'],
      retries: { attempts: 3, delaySeconds: 1, policy: 'constant' },
    });
    await daemon.request('POST', '/api/sessions', { name: 'held', start: true });
    const [held] = await receiver.waitForCount(1, '/held');
    const removed = await daemon.request('DELETE', `/api/webhooks/${webhook.id}`);
    assert.equal(removed.status, 200);
    assert.equal(removed.body.data.success, true);
    // a new event for the deleted webhook while its attempt is still open
    await daemon.request('POST', '/api/sessions/held/stop');
    receiver.release(500);
    await waitFor(() => held!.answered, 5000, 'the held answer to be written');
    await sleep(1500);
    assert.equal(receiver.on('/held').length, 1, 'exactly the one request in flight, no retry, no later delivery');
    const log = await daemon.request('GET', `/api/webhooks/${webhook.id}/deliveries`);
    assert.equal(log.status, 404);
    assert.equal(log.body.error.code, 'WEBHOOK_NOT_FOUND');
  });

  test('the event stream delivers events, filtered by session and type', async () => {
    const stream = await collectEvents(daemon, 'session=sse1&events=session.status,session.connected');
    await daemon.request('POST', '/api/sessions', { name: 'sse1', start: true });
    await daemon.request('POST', '/api/sandbox/sessions/sse1/pair', { phoneNumber: '+15550100009' });
    const connected = await stream.next((e) => e.event === 'session.connected');
    await stream.next((e) => e.event === 'session.status' && e.payload.status === 'CONNECTED');
    stream.close();
    assert.equal(connected.session, 'sse1');
    assert.deepEqual(Object.keys(connected), ['id', 'event', 'session', 'seq', 'timestamp', 'payload']);
    assert.ok(stream.events.every((e) => e.session === 'sse1' && e.event !== 'session.qr'));
    const bad = await fetch(`${daemon.url}/api/events/stream?events=nope`, { headers: { Authorization: `Bearer ${daemon.masterKey}` } });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).error.code, 'VALIDATION_FAILED');
  });

  test('retry policies: still exactly 4 tries each once the would-be fifth try (1 s, 4 s, 8 s after the fourth) is past', async () => {
    assert.ok(retryPolicyRun, 'the retry policy test ran first');
    const wouldBe = { constant: 1000, linear: 4000, exponential: 8000 };
    const policies = ['constant', 'linear', 'exponential'] as const;
    const until = Math.max(...policies.map((p) => retryPolicyRun!.lastTry[p]! + wouldBe[p] + 500));
    await sleep(Math.max(0, until - Date.now()));
    for (const [i, policy] of policies.entries()) {
      assert.equal(receiver.on(`/retry-${policy}`).length, 4, `${policy}: no fifth try`);
      const [row] = await deliveries(daemon, retryPolicyRun!.hookIds[i]!);
      assert.equal(row.status, 'failed');
      assert.equal(row.attempts, 4);
      assert.equal(row.nextAttemptAt, null);
    }
  });
});

describe('webhook delivery with signaturePrefix', () => {
  test('X-Webhook-Signature is sha256=<hex>', async () => {
    const prefixed = await startDaemon({ config: `${CONFIG}webhooks:\n  signaturePrefix: true\n`, env: { GATEWAY_LOG_LEVEL: 'warn' } });
    try {
      const webhook = await createWebhook(prefixed, { url: `${receiver.base}/prefixed`, events: ['session.status'] });
      await prefixed.request('POST', '/api/sessions', { name: 'pfx', start: true });
      const [d] = await receiver.waitForCount(1, '/prefixed');
      assert.equal(d!.headers['x-webhook-signature'], `sha256=${hmac(webhook.hmacKey, d!.raw)}`);
    } finally {
      await prefixed.cleanup();
    }
  });
});

describe('durability', () => {
  /** Creates session `name`, pairs and stops it: five events (status CONNECTING, qr, connected, status CONNECTED, status DISCONNECTED). */
  async function fiveEvents(d: TestDaemon, name: string, phoneNumber: string) {
    const stream = await collectEvents(d, `session=${name}`);
    assert.equal((await d.request('POST', '/api/sessions', { name, start: true })).status, 201);
    assert.equal((await d.request('POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber })).status, 200);
    await stream.next((e) => e.event === 'session.connected', 5000, `${name} connected`);
    assert.equal((await d.request('POST', `/api/sessions/${name}/stop`)).status, 200);
    await stream.next((e) => e.event === 'session.status' && e.payload.status === 'DISCONNECTED', 5000, `${name} DISCONNECTED`);
    await sleep(200);
    stream.close();
    assert.deepEqual(
      stream.events.map((e) => (e.event === 'session.status' ? `status ${e.payload.status}` : e.event)).sort(),
      ['session.connected', 'session.qr', 'status CONNECTED', 'status CONNECTING', 'status DISCONNECTED'],
    );
    return stream.events;
  }

  /**
   * The daemon restarted after a kill is the same node: on PostgreSQL (the suite's second pass) it then frees the claims
   * its killed run held at once, as a restarted node does, instead of waiting for them to lapse (the webhook timeout and
   * 5 s); the test daemons' ports, from which a node's default id is made, differ.
   */
  const SAME_NODE = { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_NODE_ID: 'kill9' };

  /** The delivery ids that reached `target` with a 200 answer. */
  const arrived = (target: Receiver) => new Set(target.received.filter((d) => d.status === 200).map((d) => d.json.id as string));

  test('kill -9 with tried, pending deliveries: after a restart exactly the recorded deliveries arrive (ids compared)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-kill9-'));
    const target = await startReceiver();
    target.answer = () => 500;
    let first: TestDaemon | undefined;
    let second: TestDaemon | undefined;
    try {
      first = await startDaemon({ dataDir, config: CONFIG, env: SAME_NODE });
      const webhook = await createWebhook(first, {
        url: `${target.base}/crash`,
        session: 'crash',
        retries: { attempts: 20, delaySeconds: 1, policy: 'constant' },
      });
      const events = await fiveEvents(first, 'crash', '+15550100077');
      // one delivery per recorded event, each tried once and answered 500
      const rows = await logUntil(first, webhook.id, (r) => r.length === 5 && r.every((row) => row.attempts >= 1), 'five tried deliveries');
      assert.ok(rows.every((row) => row.status === 'pending' && row.lastStatusCode === 500 && row.nextAttemptAt !== null));
      assert.deepEqual(rows.map((row) => row.eventId).sort(), events.map((e) => e.id).sort(), 'the log holds one delivery per recorded event');
      const expected = rows.map((row) => row.id as string).sort();
      assert.equal(new Set(expected).size, 5);
      assert.deepEqual([...new Set(target.received.map((d) => d.json.id as string))].sort(), expected, 'each was tried before the kill');
      await first.kill();

      target.answer = () => 200;
      second = await startDaemon({ dataDir, config: CONFIG, env: SAME_NODE });
      await waitFor(() => arrived(target).size >= expected.length, 10_000, 'every pending delivery to arrive after the restart');
      await sleep(300);
      assert.deepEqual([...arrived(target)].sort(), expected);
      assert.ok(target.received.every((d) => expected.includes(d.json.id)), 'no delivery other than the recorded ones');
      const after = await logUntil(second, webhook.id, (r) => r.every((row) => row.status === 'succeeded'), 'all succeeded');
      assert.deepEqual(after.map((row) => row.id).sort(), expected);
    } finally {
      await first?.kill();
      await second?.cleanup();
      await target.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('kill -9 with deliveries written but never attempted: after a restart every one arrives (ids compared)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-kill9-'));
    // one attempt at a time per webhook, and the receiver holds the first: the other four stay untried in the outbox
    const config = `${CONFIG}webhooks:\n  perWebhookConcurrency: 1\n`;
    const target = await startReceiver();
    target.answer = () => 'hold';
    let first: TestDaemon | undefined;
    let second: TestDaemon | undefined;
    try {
      first = await startDaemon({ dataDir, config, env: SAME_NODE });
      const webhook = await createWebhook(first, { url: `${target.base}/untried`, session: 'untried' });
      const events = await fiveEvents(first, 'untried', '+15550100078');
      const rows = await logUntil(first, webhook.id, (r) => r.length === 5, 'five deliveries written');
      assert.deepEqual(rows.map((row) => row.eventId).sort(), events.map((e) => e.id).sort());
      assert.ok(rows.every((row) => row.status === 'pending' && row.attempts === 0 && row.lastStatusCode === null), JSON.stringify(rows));
      const [held] = await target.waitForCount(1);
      await sleep(300);
      assert.equal(target.received.length, 1, 'only the held attempt reached the receiver');
      const expected = rows.map((row) => row.id as string).sort();
      assert.ok(expected.includes(held!.json.id));
      await first.kill();

      target.answer = () => 200;
      second = await startDaemon({ dataDir, config, env: SAME_NODE });
      await waitFor(() => arrived(target).size >= expected.length, 10_000, 'every untried delivery to arrive after the restart');
      await sleep(300);
      assert.deepEqual([...arrived(target)].sort(), expected);
      // the held one went again (its outcome was never recorded): at least once, never lost
      assert.deepEqual(target.received.slice(1).map((d) => d.json.id).sort(), expected, 'each delivery exactly once after the restart');
      assert.ok(target.received.slice(1).every((d) => d.headers['x-webhook-attempt'] === '1'));
      const after = await logUntil(second, webhook.id, (r) => r.every((row) => row.status === 'succeeded'), 'all succeeded');
      assert.deepEqual(after.map((row) => row.id).sort(), expected);
      assert.ok(after.every((row) => row.attempts === 1));
    } finally {
      await first?.kill();
      await second?.cleanup();
      await target.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('retention: at start, succeeded and failed rows older than webhooks.retentionDays are pruned; pending rows stay', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-retention-'));
    const target = await startReceiver();
    // /ret: the 2nd and 4th arrivals fail (no retries); /ret-pending: always 500, next retry an hour away
    target.answer = (d, index) => (d.path === '/ret-pending' || index % 2 === 1 ? 500 : 200);
    let daemonRun: TestDaemon | undefined;
    try {
      daemonRun = await startDaemon({ dataDir, config: CONFIG, env: SAME_NODE });
      const done = await createWebhook(daemonRun, { url: `${target.base}/ret`, session: 'ret', retries: { attempts: 0 } });
      const pending = await createWebhook(daemonRun, {
        url: `${target.base}/ret-pending`,
        session: 'ret',
        events: ['session.status'],
        retries: { attempts: 3, delaySeconds: 3600, policy: 'constant' },
      });
      await fiveEvents(daemonRun, 'ret', '+15550100079');
      const settled = await logUntil(daemonRun, done.id, (r) => r.length === 5 && r.every((row) => row.status !== 'pending'), 'five settled deliveries');
      const succeeded = settled.filter((row) => row.status === 'succeeded').map((row) => row.id as string);
      const failed = settled.filter((row) => row.status === 'failed').map((row) => row.id as string);
      assert.equal(succeeded.length, 3);
      assert.equal(failed.length, 2);
      const waiting = await logUntil(daemonRun, pending.id, (r) => r.length === 3 && r.every((row) => row.attempts === 1), 'three pending deliveries');
      assert.ok(waiting.every((row) => row.status === 'pending'));
      assert.equal(await daemonRun.stop(), 0);

      // age every row 8 days, but one succeeded row only 6 days
      const db = await openDaemonDb(dataDir);
      const now = Date.now();
      await db.prepare('UPDATE deliveries SET updated_at = ?, created_at = ?').run(now - 8 * DAY_MS, now - 8 * DAY_MS);
      await db.prepare('UPDATE deliveries SET updated_at = ? WHERE id = ?').run(now - 6 * DAY_MS, succeeded[0]);
      await db.close();

      // retentionDays 10: nothing is old enough
      daemonRun = await startDaemon({ dataDir, config: `${CONFIG}webhooks:\n  retentionDays: 10\n`, env: { GATEWAY_LOG_LEVEL: 'warn' } });
      assert.equal((await deliveries(daemonRun, done.id)).length, 5);
      assert.equal((await deliveries(daemonRun, pending.id)).length, 3);
      assert.equal(await daemonRun.stop(), 0);

      // the default 7 days: the two 8-day-old succeeded rows and the two 8-day-old failed rows go
      daemonRun = await startDaemon({ dataDir, config: CONFIG, env: SAME_NODE });
      const kept = await logUntil(daemonRun, done.id, (r) => r.length === 1, 'the old succeeded and failed rows pruned');
      assert.equal(failed.length, 2);
      assert.deepEqual(kept.map((row) => row.id), [succeeded[0]]);
      const stillPending = await deliveries(daemonRun, pending.id);
      assert.deepEqual(stillPending.map((row) => row.id).sort(), waiting.map((row) => row.id).sort());
      assert.ok(stillPending.every((row) => row.status === 'pending'));
    } finally {
      await daemonRun?.cleanup();
      await target.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('signed timestamps and hidden header values (issue 16)', () => {
  test('timestamp.body: the signature covers X-Webhook-Timestamp and the body; a receiver can refuse stale or altered ones', async () => {
    const hmacKey = 'timestamped-key-0123456789abcdef';
    await createWebhook(daemon, { url: `${receiver.base}/ts`, events: ['session.status'], session: 'ts1', hmacKey, signatureScheme: 'timestamp.body' });
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'ts1', start: true })).status, 201);
    const [d] = await receiver.waitForCount(1, '/ts');
    const signature = String(d!.headers['x-webhook-signature']);
    const timestamp = String(d!.headers['x-webhook-timestamp']);
    // computed independently of the daemon's signer: HMAC-SHA256 over `${timestamp}.${raw body}`
    const expected = createHmac('sha256', hmacKey).update(`${timestamp}.`).update(d!.raw).digest('hex');
    assert.equal(signature, expected);
    assert.notEqual(signature, hmac(hmacKey, d!.raw), 'not the body-only signature');

    const now = Number(timestamp);
    assert.equal(verifyTimestampedSignature(d!.raw, hmacKey, signature, timestamp, { nowSeconds: now + 10 }), true);
    // replayed six minutes later: refused, though the signature itself is genuine
    assert.equal(verifyTimestampedSignature(d!.raw, hmacKey, signature, timestamp, { nowSeconds: now + 360 }), false);
    // a replay with a fresh timestamp header but the old signature: refused
    assert.equal(verifyTimestampedSignature(d!.raw, hmacKey, signature, String(now + 360), { nowSeconds: now + 360 }), false);
    // the body-only check of the default scheme does not accept it either
    assert.equal(verifySignature(d!.raw, hmacKey, signature), false);
  });

  test('the default scheme still signs the body alone; switching a webhook to timestamp.body applies to the next delivery', async () => {
    const hmacKey = 'switching-key-0123456789abcdef';
    const webhook = await createWebhook(daemon, { url: `${receiver.base}/switch`, events: ['session.status'], session: 'ts2', hmacKey });
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'ts2', start: true })).status, 201);
    const [first] = await receiver.waitForCount(1, '/switch');
    assert.equal(verifySignature(first!.raw, hmacKey, String(first!.headers['x-webhook-signature'])), true);
    const put = await daemon.request('PUT', `/api/webhooks/${webhook.id}`, { signatureScheme: 'timestamp.body' });
    assert.equal(put.status, 200);
    assert.equal((await daemon.request('POST', '/api/sessions/ts2/stop')).status, 200);
    const [, second] = await receiver.waitForCount(2, '/switch');
    const ok = verifyTimestampedSignature(second!.raw, hmacKey, String(second!.headers['x-webhook-signature']), String(second!.headers['x-webhook-timestamp']));
    assert.equal(ok, true);
  });

  test('every delivery also carries X-Webhook-Signature-256: t=<unix s>,v1=<HMAC of "t.body">, whatever the scheme', async () => {
    const hmacKey = 'replay-proof-key-0123456789abcdef';
    await createWebhook(daemon, { url: `${receiver.base}/sig256`, events: ['session.status'], session: 'ts4', hmacKey });
    await createWebhook(daemon, { url: `${receiver.base}/sig256ts`, events: ['session.status'], session: 'ts4', hmacKey, signatureScheme: 'timestamp.body' });
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'ts4', start: true })).status, 201);
    const [bodyOnly] = await receiver.waitForCount(1, '/sig256');
    const [timestamped] = await receiver.waitForCount(1, '/sig256ts');
    // the SPEC header keeps the webhook's scheme: the body alone by default
    assert.equal(bodyOnly!.headers['x-webhook-signature'], hmac(hmacKey, bodyOnly!.raw));
    for (const d of [bodyOnly!, timestamped!]) {
      const header = String(d.headers['x-webhook-signature-256']);
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
      assert.ok(match, header);
      const [, t, v1] = match;
      assert.equal(t, d.headers['x-webhook-timestamp']);
      // computed independently of the daemon's signer
      assert.equal(v1, createHmac('sha256', hmacKey).update(`${t}.`).update(d.raw).digest('hex'));
      const now = Number(t);
      assert.equal(verifySignature256(d.raw, hmacKey, header, { nowSeconds: now + 10 }), true);
      // replayed six minutes later: refused; with a fresh t and the old v1: refused; another body: refused
      assert.equal(verifySignature256(d.raw, hmacKey, header, { nowSeconds: now + 360 }), false);
      assert.equal(verifySignature256(d.raw, hmacKey, `t=${now + 360},v1=${v1}`, { nowSeconds: now + 360 }), false);
      assert.equal(verifySignature256(Buffer.concat([d.raw, Buffer.from(' ')]), hmacKey, header, { nowSeconds: now }), false);
    }
  });

  test('a header value kept through the mask on update is still the one delivered', async () => {
    const webhook = await createWebhook(daemon, {
      url: `${receiver.base}/masked`,
      events: ['session.status'],
      session: 'ts3',
      headers: [{ name: 'Authorization', value: 'Bearer kept-through-mask' }],
    });
    const got = await daemon.request('GET', `/api/webhooks/${webhook.id}`);
    assert.deepEqual(got.body.data.headers, [{ name: 'Authorization', value: '********' }]);
    // PUT back what GET returned, plus a new header
    const put = await daemon.request('PUT', `/api/webhooks/${webhook.id}`, { headers: [...got.body.data.headers, { name: 'X-Extra', value: 'e' }] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'ts3', start: true })).status, 201);
    const [d] = await receiver.waitForCount(1, '/masked');
    assert.equal(d!.headers.authorization, 'Bearer kept-through-mask');
    assert.equal(d!.headers['x-extra'], 'e');
  });
});

describe('fan-out of a burst to many webhooks (issue 27)', () => {
  test('a burst to 25 webhooks, past what one tick writes itself: every event reaches every webhook once, signed, and nothing is left to expand', async () => {
    const hooks = await Promise.all(
      Array.from({ length: 25 }, (_, i) => createWebhook(daemon, { url: `${receiver.base}/fan-${i}`, events: ['message.received'], session: 'fan1' })),
    );
    try {
      await pairedSession(daemon, 'fan1', '+15550100091');
      const burst = await daemon.request('POST', '/api/sandbox/sessions/fan1/inbound/burst', { count: 100, contacts: 10 });
      assert.equal(burst.status, 200, JSON.stringify(burst.body));
      const arrived = () => receiver.received.filter((d) => d.path.startsWith('/fan-'));
      await waitFor(() => arrived().length >= 2500, 60_000, '2,500 deliveries');
      await sleep(200);
      const all = arrived();
      assert.equal(all.length, 2500, 'no delivery twice');
      assert.equal(new Set(all.map((d) => d.json.id)).size, 2500, 'each delivery its own id');
      for (const [i, hook] of hooks.entries()) {
        const mine = all.filter((d) => d.path === `/fan-${i}`);
        assert.equal(new Set(mine.map((d) => d.json.payload.messageId)).size, 100, `webhook ${i}: each message once`);
        for (const d of mine) assert.equal(d.headers['x-webhook-signature'], hmac(hook.hmacKey, d.raw));
      }
      const db = await openDaemonDb(daemon.dataDir);
      try {
        assert.equal(await db.prepare('SELECT COUNT(*) FROM fanouts').pluck().get(), 0);
      } finally {
        await db.close();
      }
    } finally {
      for (const hook of hooks) await daemon.request('DELETE', `/api/webhooks/${hook.id}`);
    }
  });
});
