// /api/webhooks against a real daemon: CRUD, partial update, every validation rule, the URL policy, access, the delivery log routes (filter, paging).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, waitFor, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents } from '../../helpers/events.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

let daemon: TestDaemon;
/** a daemon with the default URL policy: public https targets only */
let strict: TestDaemon;
before(async () => {
  const [a, b] = await Promise.allSettled([
    startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } }),
    startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' } }),
  ]);
  // keep whichever started, so the after hook stops it even when the other failed
  if (a.status === 'fulfilled') daemon = a.value;
  if (b.status === 'fulfilled') strict = b.value;
  for (const result of [a, b]) if (result.status === 'rejected') throw result.reason;
});
after(() => Promise.all([daemon?.cleanup(), strict?.cleanup()]));

const URL = 'http://127.0.0.1:9/hook';

async function create(body: Record<string, unknown>, d = daemon) {
  const res = await d.request('POST', '/api/webhooks', body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

/** Asserts a 400 with `code` whose details name `path`. */
async function rejects(method: string, path: string, body: unknown, detailPath: string, code = 'VALIDATION_FAILED', d = daemon) {
  const res = await d.request(method, path, body);
  assert.equal(res.status, 400, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, code);
  assert.ok(res.body.error.message.length > 0);
  assert.ok(
    (res.body.error.details ?? []).some((d: { path: string }) => d.path === detailPath),
    `${JSON.stringify(body)}: expected a detail at ${detailPath}, got ${JSON.stringify(res.body.error)}`,
  );
  return res.body.error;
}

describe('webhook CRUD', () => {
  test('create: defaults, a generated 32-byte hex key returned once', async () => {
    const res = await daemon.request('POST', '/api/webhooks', { url: URL });
    assert.equal(res.status, 201);
    const w = res.body.data;
    assert.equal(typeof w.id, 'number');
    assert.equal(w.url, URL);
    assert.deepEqual(w.events, []);
    assert.equal(w.session, null);
    assert.equal(w.enabled, true);
    assert.deepEqual(w.headers, []);
    assert.deepEqual(w.retries, { attempts: 3, delaySeconds: 5, policy: 'exponential' });
    assert.match(w.hmacKey, /^[0-9a-f]{64}$/);
    assert.match(w.createdAt, /^\d{4}-\d\d-\d\dT/);

    const got = await daemon.request('GET', `/api/webhooks/${w.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.data.hmacKey, undefined);
    assert.deepEqual({ ...got.body.data }, Object.fromEntries(Object.entries(w).filter(([k]) => k !== 'hmacKey')));
    const list = await daemon.request('GET', '/api/webhooks');
    assert.ok(list.body.data.length >= 1);
    assert.ok(list.body.data.every((x: { hmacKey?: string }) => x.hmacKey === undefined));
    assert.equal(list.headers.get('x-total-count'), String(list.body.data.length));
  });

  test('create with every field; the given key is echoed once; "*" and [] both mean all events', async () => {
    const w = await create({
      url: URL,
      events: ['message.received', 'session.status', 'message.received'],
      session: 'shop-1',
      enabled: false,
      headers: [{ name: 'Authorization', value: 'Bearer x' }],
      retries: { attempts: 0, delaySeconds: 3600, policy: 'linear' },
      hmacKey: 'sixteen-chars-ok',
    });
    assert.deepEqual(w.events, ['message.received', 'session.status']);
    assert.equal(w.session, 'shop-1');
    assert.equal(w.enabled, false);
    assert.deepEqual(w.headers, [{ name: 'Authorization', value: '********' }]);
    assert.deepEqual(w.retries, { attempts: 0, delaySeconds: 3600, policy: 'linear' });
    assert.equal(w.hmacKey, 'sixteen-chars-ok');
    assert.deepEqual((await create({ url: URL, events: ['*'] })).events, []);
    assert.deepEqual((await create({ url: URL, events: [] })).events, []);
    assert.deepEqual((await create({ url: URL, retries: { policy: 'constant' } })).retries, { attempts: 3, delaySeconds: 5, policy: 'constant' });
  });

  test('update is partial: only supplied fields change; headers replace the list; retries merge', async () => {
    const w = await create({
      url: URL,
      events: ['session.qr'],
      session: 'alpha',
      headers: [
        { name: 'X-A', value: '1' },
        { name: 'X-B', value: '2' },
      ],
      retries: { attempts: 4, delaySeconds: 2, policy: 'constant' },
    });
    const url2 = 'http://127.0.0.1:9/other';
    const a = await daemon.request('PUT', `/api/webhooks/${w.id}`, { url: url2 });
    assert.equal(a.status, 200);
    assert.equal(a.body.data.url, url2);
    assert.deepEqual(a.body.data.events, ['session.qr']);
    assert.equal(a.body.data.session, 'alpha');
    assert.equal(a.body.data.headers.length, 2);
    assert.equal(a.body.data.hmacKey, undefined);

    const b = await daemon.request('PUT', `/api/webhooks/${w.id}`, {
      headers: [{ name: 'X-C', value: '3' }],
      retries: { delaySeconds: 9 },
      session: null,
      events: ['*'],
      enabled: false,
      hmacKey: 'a-brand-new-key-123',
    });
    assert.equal(b.status, 200);
    assert.deepEqual(b.body.data.headers, [{ name: 'X-C', value: '********' }]);
    assert.deepEqual(b.body.data.retries, { attempts: 4, delaySeconds: 9, policy: 'constant' });
    assert.equal(b.body.data.session, null);
    assert.deepEqual(b.body.data.events, []);
    assert.equal(b.body.data.enabled, false);
    assert.equal(b.body.data.url, url2);
    assert.equal(b.body.data.hmacKey, undefined);

    const c = await daemon.request('PUT', `/api/webhooks/${w.id}`, { enabled: true });
    assert.equal(c.body.data.enabled, true);
    assert.deepEqual(c.body.data.headers, [{ name: 'X-C', value: '********' }]);
    assert.ok(Date.parse(c.body.data.updatedAt) >= Date.parse(w.updatedAt));
    // a PUT that changes nothing writes nothing: not even updatedAt moves
    await new Promise((done) => setTimeout(done, 5));
    for (const same of [{}, { enabled: true }, { retries: {} }, { headers: [{ name: 'X-C', value: '********' }] }]) {
      const none = await daemon.request('PUT', `/api/webhooks/${w.id}`, same);
      assert.equal(none.status, 200);
      assert.deepEqual(none.body.data, c.body.data, JSON.stringify(same));
    }
    const moved = await daemon.request('PUT', `/api/webhooks/${w.id}`, { enabled: false });
    assert.ok(Date.parse(moved.body.data.updatedAt) > Date.parse(c.body.data.updatedAt));
  });

  test('delete, then 404 WEBHOOK_NOT_FOUND everywhere; the id must be a positive integer', async () => {
    const w = await create({ url: URL });
    const del = await daemon.request('DELETE', `/api/webhooks/${w.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body.data, { success: true, message: `webhook ${w.id} deleted` });
    for (const [method, path, body] of [
      ['GET', `/api/webhooks/${w.id}`],
      ['PUT', `/api/webhooks/${w.id}`, { enabled: false }],
      ['DELETE', `/api/webhooks/${w.id}`],
      ['GET', `/api/webhooks/${w.id}/deliveries`],
      ['POST', `/api/webhooks/${w.id}/deliveries/x/retry`],
      ['GET', '/api/webhooks/999999'],
    ] as const) {
      const res = await daemon.request(method, path, body);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.error.code, 'WEBHOOK_NOT_FOUND');
    }
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
      const res = await daemon.request('GET', `/api/webhooks/${id}`);
      assert.equal(res.status, 400, id);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.equal(res.body.error.details[0].path, '/id');
    }
  });

  test('delivery log routes: empty log, paging headers, query validation, unknown delivery', async () => {
    const w = await create({ url: URL });
    const log = await daemon.request('GET', `/api/webhooks/${w.id}/deliveries?status=failed&limit=5&offset=0`);
    assert.equal(log.status, 200);
    assert.deepEqual(log.body.data, []);
    assert.equal(log.headers.get('x-total-count'), '0');
    await rejects('GET', `/api/webhooks/${w.id}/deliveries?status=lost`, undefined, '/status');
    await rejects('GET', `/api/webhooks/${w.id}/deliveries?limit=0`, undefined, '/limit');
    await rejects('GET', `/api/webhooks/${w.id}/deliveries?limit=1001`, undefined, '/limit');
    await rejects('GET', `/api/webhooks/${w.id}/deliveries?offset=-1`, undefined, '/offset');
    const retry = await daemon.request('POST', `/api/webhooks/${w.id}/deliveries/00000000-0000-0000-0000-000000000000/retry`);
    assert.equal(retry.status, 404);
    assert.equal(retry.body.error.code, 'DELIVERY_NOT_FOUND');
  });

  test('delivery log on a non-empty log: status filter, limit/offset paging and X-Total-Count', async () => {
    const target = await startReceiver();
    // no retries: the 2nd and 4th arrivals fail for good, the other three succeed
    target.answer = (_d, index) => (index === 1 || index === 3 ? 500 : 200);
    try {
      const w = await create({ url: `${target.base}/log`, session: 'logmix', retries: { attempts: 0 } });
      const stream = await collectEvents(daemon, 'session=logmix');
      assert.equal((await daemon.request('POST', '/api/sessions', { name: 'logmix', start: true })).status, 201);
      assert.equal((await daemon.request('POST', '/api/sandbox/sessions/logmix/pair', { phoneNumber: '+15550100123' })).status, 200);
      await stream.next((e) => e.event === 'session.connected');
      assert.equal((await daemon.request('POST', '/api/sessions/logmix/stop')).status, 200);
      await stream.next((e) => e.event === 'session.status' && e.payload.status === 'DISCONNECTED');
      const received = await target.waitForCount(5);
      await waitFor(async () => {
        const res = await daemon.request('GET', `/api/webhooks/${w.id}/deliveries?status=pending`);
        return res.headers.get('x-total-count') === '0' && received.every((d) => d.answered);
      }, 10_000, 'every delivery settled');
      stream.close();
      assert.equal(stream.events.length, 5);
      const okIds = received.filter((d) => d.status === 200).map((d) => d.json.id as string).sort();
      const failedIds = received.filter((d) => d.status === 500).map((d) => d.json.id as string).sort();
      assert.equal(okIds.length, 3);
      assert.equal(failedIds.length, 2);

      const get = async (query: string) => {
        const res = await daemon.request('GET', `/api/webhooks/${w.id}/deliveries${query}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return { rows: res.body.data as any[], total: res.headers.get('x-total-count') };
      };

      // the whole log: newest first, one row per event, every documented field
      const all = await get('');
      assert.equal(all.total, '5');
      assert.deepEqual(all.rows.map((r) => r.eventId), stream.events.map((e) => e.id).reverse(), 'newest first');
      for (const row of all.rows) {
        assert.deepEqual(Object.keys(row).sort(), ['attempts', 'createdAt', 'event', 'eventId', 'id', 'lastError', 'lastStatusCode', 'nextAttemptAt', 'session', 'status', 'updatedAt']);
        assert.equal(row.session, 'logmix');
        assert.equal(row.attempts, 1);
        assert.equal(row.nextAttemptAt, null);
        assert.match(row.createdAt, /^\d{4}-\d\d-\d\dT.*Z$/);
        assert.ok(Date.parse(row.updatedAt) >= Date.parse(row.createdAt));
      }

      // one delivery: its log row and the exact body it POSTed
      for (const delivery of received) {
        const one = await daemon.request('GET', `/api/webhooks/${w.id}/deliveries/${delivery.json.id}`);
        assert.equal(one.status, 200, JSON.stringify(one.body));
        const { body, ...row } = one.body.data;
        if (delivery.json.event === 'session.qr') {
          // the pairing QR is kept sealed, and shown so: only the POST carried it in the clear
          const logged = JSON.parse(body);
          assert.match(logged.payload.qr, /^v1:/);
          assert.deepEqual({ ...logged, payload: { ...logged.payload, qr: delivery.json.payload.qr } }, delivery.json);
        } else {
          assert.equal(body, delivery.raw.toString('utf8'));
        }
        assert.deepEqual(row, all.rows.find((r) => r.id === delivery.json.id));
      }
      const unknown = await daemon.request('GET', `/api/webhooks/${w.id}/deliveries/no-such-delivery`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'DELIVERY_NOT_FOUND');

      // filter by status
      const succeeded = await get('?status=succeeded');
      assert.equal(succeeded.total, '3');
      assert.deepEqual(succeeded.rows.map((r) => r.id).sort(), okIds);
      assert.ok(succeeded.rows.every((r) => r.status === 'succeeded' && r.lastStatusCode === 200 && r.lastError === null));
      const failed = await get('?status=failed');
      assert.equal(failed.total, '2');
      assert.deepEqual(failed.rows.map((r) => r.id).sort(), failedIds);
      assert.ok(failed.rows.every((r) => r.status === 'failed' && r.lastStatusCode === 500 && r.lastError === 'HTTP 500'));
      const pending = await get('?status=pending');
      assert.equal(pending.total, '0');
      assert.deepEqual(pending.rows, []);
      // a filtered page keeps the log's order
      assert.deepEqual(succeeded.rows.map((r) => r.id), all.rows.filter((r) => r.status === 'succeeded').map((r) => r.id));

      // paging: the pages put together are the whole log; X-Total-Count is the total, not the page size
      const pages = [await get('?limit=2&offset=0'), await get('?limit=2&offset=2'), await get('?limit=2&offset=4')];
      assert.deepEqual(pages.map((p) => p.rows.length), [2, 2, 1]);
      assert.ok(pages.every((p) => p.total === '5'));
      assert.deepEqual(pages.flatMap((p) => p.rows), all.rows);
      const beyond = await get('?limit=2&offset=10');
      assert.deepEqual(beyond.rows, []);
      assert.equal(beyond.total, '5');

      // filter and paging together
      const filteredPage = await get('?status=succeeded&limit=2&offset=1');
      assert.equal(filteredPage.total, '3');
      assert.deepEqual(filteredPage.rows, succeeded.rows.slice(1, 3));
      const onlyFailed = await get('?status=failed&limit=1&offset=1');
      assert.equal(onlyFailed.total, '2');
      assert.deepEqual(onlyFailed.rows, failed.rows.slice(1, 2));
    } finally {
      await target.close();
    }
  });
});

describe('webhook validation', () => {
  test('body shape: url required, unknown fields, types', async () => {
    await rejects('POST', '/api/webhooks', {}, '/url');
    await rejects('POST', '/api/webhooks', { url: '' }, '/url');
    await rejects('POST', '/api/webhooks', { url: 42 }, '/url');
    await rejects('POST', '/api/webhooks', { url: URL, colour: 'red' }, '/colour');
    await rejects('POST', '/api/webhooks', { url: URL, enabled: 'yes' }, '/enabled');
    await rejects('PUT', `/api/webhooks/${(await create({ url: URL })).id}`, { nope: 1 }, '/nope');
    const notJson = await daemon.request('POST', '/api/webhooks', '{"url":', undefined, { 'Content-Type': 'application/json' });
    assert.equal(notJson.status, 400);
  });

  test('events must come from the catalogue', async () => {
    await rejects('POST', '/api/webhooks', { url: URL, events: ['message.received', 'message.exploded'] }, '/events/1');
    await rejects('POST', '/api/webhooks', { url: URL, events: 'session.status' }, '/events');
    await rejects('POST', '/api/webhooks', { url: URL, events: [7] }, '/events/0');
  });

  test('session must be a valid session name', async () => {
    await rejects('POST', '/api/webhooks', { url: URL, session: 'bad name' }, '/session');
    await rejects('POST', '/api/webhooks', { url: URL, session: '-leading' }, '/session');
    await rejects('POST', '/api/webhooks', { url: URL, session: 'x'.repeat(65) }, '/session');
    await rejects('POST', '/api/webhooks', { url: URL, session: null }, '/session');
  });

  test('retries: attempts 0..20, delaySeconds 0..3600, a known policy', async () => {
    for (const [retries, path] of [
      [{ attempts: 21 }, '/retries/attempts'],
      [{ attempts: -1 }, '/retries/attempts'],
      [{ attempts: 1.5 }, '/retries/attempts'],
      [{ delaySeconds: 3601 }, '/retries/delaySeconds'],
      [{ delaySeconds: -1 }, '/retries/delaySeconds'],
      [{ policy: 'fibonacci' }, '/retries/policy'],
      [{ jitter: true }, '/retries/jitter'],
    ] as const) {
      await rejects('POST', '/api/webhooks', { url: URL, retries }, path);
    }
    assert.deepEqual((await create({ url: URL, retries: { attempts: 20, delaySeconds: 0 } })).retries, { attempts: 20, delaySeconds: 0, policy: 'exponential' });
  });

  test('hmacKey: at least 16 characters', async () => {
    await rejects('POST', '/api/webhooks', { url: URL, hmacKey: 'short' }, '/hmacKey');
    await rejects('PUT', `/api/webhooks/${(await create({ url: URL })).id}`, { hmacKey: 'fifteen-chars!!' }, '/hmacKey');
  });

  test('headers: at most 10, token names, no CR/LF, no reserved or X-Webhook-* names, no duplicates', async () => {
    const many = Array.from({ length: 11 }, (_, i) => ({ name: `X-H${i}`, value: 'v' }));
    await rejects('POST', '/api/webhooks', { url: URL, headers: many }, '/headers');
    assert.equal((await create({ url: URL, headers: many.slice(0, 10) })).headers.length, 10);
    for (const name of ['Bad Header', 'X:Y', 'Ünicode', '(x)', 'a/b']) {
      const error = await rejects('POST', '/api/webhooks', { url: URL, headers: [{ name, value: 'v' }] }, '/headers/0/name');
      assert.match(error.message, /not a valid header name/);
    }
    await rejects('POST', '/api/webhooks', { url: URL, headers: [{ name: '', value: 'v' }] }, '/headers/0/name');
    const hopByHop = ['Keep-Alive', 'upgrade', 'Expect', 'TE', 'Trailer', 'Proxy-Authorization', 'proxy-connection'];
    for (const name of ['Content-Type', 'content-length', 'HOST', 'Transfer-Encoding', 'connection', 'X-Webhook-Signature', 'x-webhook-id', 'X-WEBHOOK-Custom', ...hopByHop]) {
      const error = await rejects('POST', '/api/webhooks', { url: URL, headers: [{ name: 'X-Ok', value: '1' }, { name, value: 'v' }] }, '/headers/1/name');
      assert.match(error.message, /cannot be overridden/);
    }
    for (const value of ['a\r\nInjected: 1', 'line\nbreak', 'cr\r', 'nul\0', 'bell\x07', 'del\x7f', 'esc\x1b[0m']) {
      await rejects('POST', '/api/webhooks', { url: URL, headers: [{ name: 'X-Val', value }] }, '/headers/0/value');
    }
    await rejects('POST', '/api/webhooks', { url: URL, headers: [{ name: 'X-Dup', value: '1' }, { name: 'x-dup', value: '2' }] }, '/headers/1/name');
    await rejects('POST', '/api/webhooks', { url: URL, headers: [{ name: 'X-Only-Name' }] }, '/headers/0/value');
    const w = await create({ url: URL });
    await rejects('PUT', `/api/webhooks/${w.id}`, { headers: [{ name: 'Host', value: 'evil' }] }, '/headers/0/name');
  });
});

describe('webhook URL policy (allowPrivateTargets false)', () => {
  test('private, loopback, internal and malformed targets are refused with WEBHOOK_URL_REJECTED', async () => {
    for (const url of [
      'http://example.com/hook',
      'ftp://example.com/hook',
      'not a url',
      'https://user:pass@example.com/hook',
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://api.localhost/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://172.16.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://224.0.0.1/hook',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00::1]/hook',
      'https://2130706433/hook',
      'https://0x7f000001/hook',
      'https://0177.0.0.1/hook',
      'https://intranet/hook',
      'https://printer.local/hook',
      'https://db.internal/hook',
    ]) {
      const error = await rejects('POST', '/api/webhooks', { url }, '/url', 'WEBHOOK_URL_REJECTED', strict);
      assert.match(error.message, /^Webhook URL rejected: /, url);
    }
  });

  test('a public https URL is accepted and stored normalised; update checks the URL too', async () => {
    const w = await create({ url: 'HTTPS://Example.COM:443/hooks/in' }, strict);
    assert.equal(w.url, 'https://example.com/hooks/in');
    await rejects('PUT', `/api/webhooks/${w.id}`, { url: 'https://10.0.0.1/' }, '/url', 'WEBHOOK_URL_REJECTED', strict);
    const got = await strict.request('GET', `/api/webhooks/${w.id}`);
    assert.equal(got.body.data.url, 'https://example.com/hooks/in');
  });
});

describe('webhook access', () => {
  test('webhooks:manage is required; the master key may do everything', async () => {
    const manage = await daemon.request('POST', '/api/admin/keys', { name: 'hooks', scopes: ['webhooks:manage'] });
    const reader = await daemon.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['sessions:read'] });
    const key = manage.body.data.key as string;
    const ok = await daemon.request('POST', '/api/webhooks', { url: URL }, key);
    assert.equal(ok.status, 201);
    assert.equal((await daemon.request('GET', `/api/webhooks/${ok.body.data.id}`, undefined, key)).status, 200);
    const denied = await daemon.request('GET', '/api/webhooks', undefined, reader.body.data.key);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'FORBIDDEN_SCOPE');
    assert.equal((await daemon.request('GET', '/api/webhooks', undefined, null)).status, 401);
    const stream = await fetch(`${daemon.url}/api/events/stream`, { headers: { Authorization: `Bearer ${reader.body.data.key}` } });
    assert.equal(stream.status, 403);
    await stream.body?.cancel();
  });

  test('a session-limited key manages only webhooks filtered to its sessions', async () => {
    const limited = await daemon.request('POST', '/api/admin/keys', { name: 'shop', scopes: ['webhooks:manage'], sessions: ['shop-a'] });
    const key = limited.body.data.key as string;
    const unfiltered = await daemon.request('POST', '/api/webhooks', { url: URL }, key);
    assert.equal(unfiltered.status, 403);
    assert.equal(unfiltered.body.error.code, 'FORBIDDEN_SESSION');
    const other = await daemon.request('POST', '/api/webhooks', { url: URL, session: 'shop-b' }, key);
    assert.equal(other.status, 403);
    const mine = await daemon.request('POST', '/api/webhooks', { url: URL, session: 'shop-a' }, key);
    assert.equal(mine.status, 201);
    const list = await daemon.request('GET', '/api/webhooks', undefined, key);
    assert.deepEqual(list.body.data.map((w: { id: number }) => w.id), [mine.body.data.id]);
    const foreign = await create({ url: URL });
    assert.equal((await daemon.request('GET', `/api/webhooks/${foreign.id}`, undefined, key)).status, 404);
    assert.equal((await daemon.request('DELETE', `/api/webhooks/${foreign.id}`, undefined, key)).status, 404);
    const widen = await daemon.request('PUT', `/api/webhooks/${mine.body.data.id}`, { session: null }, key);
    assert.equal(widen.status, 403);
  });
});

describe('webhook secrets and signature scheme (issue 16)', () => {
  const SECRET = 'Bearer receiver-own-token-5f3a9c';

  test('custom header values never come back: create, GET one, list and PUT show names with masked values', async () => {
    const w = await create({ url: URL, headers: [{ name: 'Authorization', value: SECRET }, { name: 'X-Tenant', value: 'acme-tenant-77' }] });
    const masked = [
      { name: 'Authorization', value: '********' },
      { name: 'X-Tenant', value: '********' },
    ];
    assert.deepEqual(w.headers, masked);
    const one = await daemon.request('GET', `/api/webhooks/${w.id}`);
    assert.deepEqual(one.body.data.headers, masked);
    const list = await daemon.request('GET', '/api/webhooks');
    assert.deepEqual(list.body.data.find((x: { id: number }) => x.id === w.id).headers, masked);
    const put = await daemon.request('PUT', `/api/webhooks/${w.id}`, { enabled: false });
    assert.deepEqual(put.body.data.headers, masked);
    for (const body of [w, one.body, list.body, put.body]) {
      const text = JSON.stringify(body);
      assert.ok(!text.includes('receiver-own-token') && !text.includes('acme-tenant-77'), text);
    }
  });

  test('sending the mask back keeps the stored value; a mask for a header the webhook lacks is refused', async () => {
    const w = await create({ url: URL, headers: [{ name: 'Authorization', value: SECRET }] });
    // a client that GETs, edits and PUTs the whole webhook back: the masked value stands for the stored one
    const back = await daemon.request('PUT', `/api/webhooks/${w.id}`, {
      headers: [
        { name: 'authorization', value: '********' },
        { name: 'X-New', value: 'n' },
      ],
    });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.deepEqual(back.body.data.headers, [
      { name: 'authorization', value: '********' },
      { name: 'X-New', value: '********' },
    ]);
    await rejects('PUT', `/api/webhooks/${w.id}`, { headers: [{ name: 'X-Unknown', value: '********' }] }, '/headers/0/value');
  });

  test('stored header values never follow the webhook to another origin: the move must resend them', async () => {
    const w = await create({ url: URL, headers: [{ name: 'Authorization', value: SECRET }] });
    const elsewhere = 'https://attacker.example.net/collect';
    await rejects('PUT', `/api/webhooks/${w.id}`, { url: elsewhere }, '/headers');
    await rejects('PUT', `/api/webhooks/${w.id}`, { url: elsewhere, headers: [{ name: 'Authorization', value: '********' }] }, '/headers/0/value');
    assert.equal((await daemon.request('GET', `/api/webhooks/${w.id}`)).body.data.url, URL, 'a refused move changes nothing');
    // the same origin keeps them; a move that gives the values (or drops the headers) is allowed
    const samePath = `${new globalThis.URL(URL).origin}/other-path`;
    assert.equal((await daemon.request('PUT', `/api/webhooks/${w.id}`, { url: samePath })).status, 200);
    const moved = await daemon.request('PUT', `/api/webhooks/${w.id}`, { url: elsewhere, headers: [] });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual(moved.body.data.headers, []);
  });

  test('signatureScheme: "body" by default, "timestamp.body" on request, changed by PUT, anything else refused', async () => {
    assert.equal((await create({ url: URL })).signatureScheme, 'body');
    const w = await create({ url: URL, signatureScheme: 'timestamp.body' });
    assert.equal(w.signatureScheme, 'timestamp.body');
    assert.equal((await daemon.request('GET', `/api/webhooks/${w.id}`)).body.data.signatureScheme, 'timestamp.body');
    const put = await daemon.request('PUT', `/api/webhooks/${w.id}`, { signatureScheme: 'body' });
    assert.equal(put.body.data.signatureScheme, 'body');
    await rejects('POST', '/api/webhooks', { url: URL, signatureScheme: 'timestamp' }, '/signatureScheme');
    await rejects('PUT', `/api/webhooks/${w.id}`, { signatureScheme: null }, '/signatureScheme');
  });
});
