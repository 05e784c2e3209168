// Query parameters end to end: every numeric one typed and bounded (a 400 naming it, never a 500), repeated keys and
// unknown parameters refused on every route, found from the route table so a new list route is covered without a test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { routeTable } from '../../src/http/document.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';

const routes = routeTable();

/** path parameters that pass their schemas (validation of the query comes before any lookup) */
const SAMPLE_PARAMS: Record<string, string> = {
  session: 'shop',
  id: '1',
  mediaId: '00000000-0000-4000-8000-000000000000',
  labelId: '1',
  deliveryId: 'd1',
};
const concrete = (path: string) => path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(SAMPLE_PARAMS[name] ?? '120363000000000001@g.us'));

// the lists paged by limit and offset (GET /api/events is paged by a cursor: its own test covers its limit)
const listRoutes = routes.filter((r) => {
  const properties = (r.schema.query as { properties?: object } | undefined)?.properties;
  return r.method === 'GET' && properties && 'limit' in properties && 'offset' in properties;
});

let daemon: TestDaemon;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'shop', '+15550900001', { business: true, businessName: 'Shop' });
});
after(() => daemon.cleanup());

const BAD_NUMBERS: Array<[string, string]> = [
  ['1e400', 'an overflow to Infinity'],
  ['99999999999999999999', 'past 2^64'],
  ['1e300', 'an exponent'],
  ['-1', 'negative'],
  ['-0', 'a signed zero'],
  ['NaN', 'not a number'],
  ['Infinity', 'Infinity'],
  ['1.5', 'a fraction'],
  ['', 'empty'],
  ['0x10', 'hexadecimal'],
  [' 5', 'padded'],
  ['5abc', 'trailing junk'],
];

describe('the route table', () => {
  test('every query schema is closed, and every integer in a query or path has both bounds', () => {
    const problems: string[] = [];
    for (const route of routes) {
      const id = `${route.method} ${route.path}`;
      const query = route.schema.query as { additionalProperties?: boolean } | undefined;
      if (query && query.additionalProperties !== false) problems.push(`${id}: query schema not closed`);
      for (const source of ['query', 'params'] as const) {
        const properties = (route.schema[source] as { properties?: Record<string, { type?: string; minimum?: number; maximum?: number }> } | undefined)?.properties ?? {};
        for (const [name, schema] of Object.entries(properties)) {
          if ((schema.type === 'integer' || schema.type === 'number') && (schema.minimum === undefined || schema.maximum === undefined)) problems.push(`${id}: ${source} ${name} unbounded`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
});

describe('numeric query parameters', () => {
  test('the route table has the list routes this test walks', () => {
    assert.ok(listRoutes.length >= 9, `list routes: ${listRoutes.map((r) => r.path).join(', ')}`);
  });

  test('every list route answers an out-of-range or mistyped limit or offset with 400 naming the parameter', async () => {
    const problems: string[] = [];
    for (const route of listRoutes) {
      for (const name of ['limit', 'offset']) {
        for (const [value, what] of [...BAD_NUMBERS, ['1001', 'over 1000'] as [string, string], ['1000000001', 'over the offset cap'] as [string, string]]) {
          if (name === 'offset' && value === '1001') continue;
          const path = `${concrete(route.path)}?${name}=${encodeURIComponent(value)}`;
          const res = await daemon.request('GET', path);
          const detail = res.body?.error?.details?.[0];
          if (res.status !== 400 || res.body.error.code !== 'VALIDATION_FAILED' || detail?.path !== `/${name}`) {
            problems.push(`${path} (${what}): ${res.status} ${JSON.stringify(res.body)}`);
          }
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('a repeated parameter is refused, not read as an array or as its first value', async () => {
    for (const route of listRoutes) {
      const res = await daemon.request('GET', `${concrete(route.path)}?limit=1&limit=2`);
      assert.equal(res.status, 400, `${route.path}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.error.details, [{ path: '/limit', message: 'is given more than once' }]);
    }
  });

  test('the bounds themselves are accepted and page as documented', async () => {
    for (const name of ['a1', 'a2', 'a3']) await daemon.request('POST', '/api/sessions', { name, engine: 'sandbox' });
    const page = await daemon.request('GET', '/api/sessions?limit=2&offset=1');
    assert.equal(page.status, 200);
    assert.equal(page.body.data.length, 2);
    assert.equal(page.headers.get('x-total-count'), '4');
    const far = await daemon.request('GET', '/api/sessions?limit=1000&offset=1000000000');
    assert.equal(far.status, 200, JSON.stringify(far.body));
    assert.deepEqual(far.body.data, []);
  });

  test('a numeric path parameter takes decimal digits only', async () => {
    for (const id of ['0x1', '1e0', '%201', 'Infinity', '99999999999999999999']) {
      const res = await daemon.request('GET', `/api/webhooks/${id}`);
      assert.equal(res.status, 400, `${id}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.details[0].path, '/id');
    }
    assert.equal((await daemon.request('GET', '/api/webhooks/1')).status, 404);
  });
});

describe('unknown query parameters', () => {
  test('are refused with 400 naming them, on routes with and without query parameters', async () => {
    for (const path of ['/api/sessions?limt=5', '/api/sessions/shop?verbose=1', '/api/health?probe=1', '/api/sessions/shop/contacts?__proto__=1', '/api/webhooks/1/deliveries?state=failed']) {
      const res = await daemon.request('GET', path);
      const name = new URL(path, daemon.url).searchParams.keys().next().value!;
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      assert.deepEqual(res.body.error.details, [{ path: `/${name}`, message: 'is not a known query parameter' }]);
      assert.match(res.body.error.message, new RegExp(`query parameter ${name}`));
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('on a POST too, before the body is looked at', async () => {
    const res = await daemon.request('POST', '/api/sessions?dryRun=true', { name: 'never' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.error.details, [{ path: '/dryRun', message: 'is not a known query parameter' }]);
    assert.equal((await daemon.request('GET', '/api/sessions/never')).status, 404);
  });

  test('documented parameters still work', async () => {
    assert.equal((await daemon.request('GET', '/api/health')).status, 200);
    const qr = await daemon.request('GET', '/api/sessions/a1/pairing/qr?format=text');
    assert.notEqual(qr.status, 400, JSON.stringify(qr.body));
    assert.equal((await daemon.request('GET', '/api/webhooks/1/deliveries?status=failed&limit=5')).status, 404);
  });
});
