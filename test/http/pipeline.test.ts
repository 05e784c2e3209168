// The HTTP pipeline reads no body before the caller is authenticated and the route found; bodies have per-route
// limits; malformed percent-encoding in a path is a 400 (never a 500 or an error log line).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange, requestHead, within } from '../helpers/raw-http.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon();
});
after(() => daemon.cleanup());

/** A 50 MB body that never finishes: only an answer given without reading the body can arrive. */
async function answerToUnfinishedBody(method: string, path: string, headers: Record<string, string> = {}) {
  const exchange = rawExchange(daemon.url, requestHead(method, path, { 'Content-Type': 'application/json', 'Content-Length': 50 * 1024 * 1024, ...headers }), '{"session":"a","chatId":"');
  try {
    return await within(exchange.answer, 10_000, `answer to ${method} ${path} while its body is unfinished`);
  } finally {
    exchange.socket.destroy();
  }
}

describe('no body is read before authentication and routing', () => {
  test('no key → 401 while the body is still unfinished', async () => {
    const answer = await answerToUnfinishedBody('POST', '/api/messages/send');
    assert.equal(answer.status, 401);
    assert.equal(answer.json.error.code, 'UNAUTHORIZED');
  });

  test('an unknown key → 401 while the body is still unfinished', async () => {
    const answer = await answerToUnfinishedBody('POST', '/api/sessions', { Authorization: 'Bearer svc_not_a_real_key' });
    assert.equal(answer.status, 401);
  });

  test('an unknown route → 404 and a wrong method → 405, without reading the body', async () => {
    const unknown = await answerToUnfinishedBody('POST', '/api/no/such/route');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'ROUTE_NOT_FOUND');
    const wrongMethod = await answerToUnfinishedBody('PUT', '/api/health');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.json.error.code, 'METHOD_NOT_ALLOWED');
  });

  test('a key without the route scope → 403 without reading the body', async () => {
    const created = await daemon.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['sessions:read'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const answer = await answerToUnfinishedBody('POST', '/api/messages/send', { Authorization: `Bearer ${created.body.data.key}` });
    assert.equal(answer.status, 403);
    assert.equal(answer.json.error.code, 'FORBIDDEN_SCOPE');
  });

  test('a refused request leaves the daemon answering on the same connection', async () => {
    const response = await fetch(`${daemon.url}/api/no/such/route`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'x'.repeat(2 * 1024 * 1024) });
    assert.equal(response.status, 404);
    await response.text();
    assert.equal((await daemon.request('GET', '/api/health', undefined, null)).status, 200);
  });
});

describe('body limits', () => {
  test('a route without media refuses a body over server.bodyLimitBytes (1 MB) with 413, by Content-Length', async () => {
    const res = await daemon.request('POST', '/api/sessions', JSON.stringify({ name: 'big', padding: 'x'.repeat(1024 * 1024) }));
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
  });

  test('a chunked body is cut off at the limit while it streams', async () => {
    const exchange = rawExchange(daemon.url, requestHead('POST', '/api/sessions', { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
    const chunk = 'x'.repeat(64 * 1024);
    const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    // 1.5 MB sent and the body never ends: only a limit checked while streaming answers
    for (let i = 0; i < 24; i++) exchange.write(frame);
    try {
      const answer = await within(exchange.answer, 10_000, 'answer to a chunked body over the limit');
      assert.equal(answer.status, 413);
      assert.equal(answer.json.error.code, 'PAYLOAD_TOO_LARGE');
    } finally {
      exchange.socket.destroy();
    }
  });

  test('a media route reads a body over the small limit', async () => {
    const res = await daemon.request('POST', '/api/messages/send', { session: 'nobody', chatId: '15550001111', type: 'image', base64: 'A'.repeat(2 * 1024 * 1024) });
    assert.notEqual(res.status, 413, JSON.stringify(res.body));
    assert.ok(res.status >= 400 && res.status < 500, JSON.stringify(res.body));
  });
});

describe('malformed percent-encoding in a path', () => {
  const paths = ['/api/sessions/%E0%A4%A/messages', '/api/sessions/%zz', '/api/sessions/%E0%A4%A/presence', '/api/sessions/x/contacts/%zz'];

  test('→ 400 VALIDATION_FAILED with and without a key, and through the client-token CORS paths', async () => {
    const origin = { Origin: 'https://app.example' };
    const cases: Array<[string, string, string | null, Record<string, string>]> = [];
    for (const path of paths) {
      cases.push(['GET', path, daemon.masterKey, {}], ['GET', path, null, {}]);
      cases.push(['OPTIONS', path, null, { ...origin, 'Access-Control-Request-Method': 'GET' }]);
      cases.push(['POST', `${path}/subscribe`, 'svc_ct_x.y.z', origin]);
    }
    cases.push(['POST', '/api/sessions/%E0%A4%A/messages/react', null, origin]);
    // every case is sent before any is judged, so that the log test below sees what all of them caused
    const wrong: string[] = [];
    for (const [method, path, key, headers] of cases) {
      const res = await daemon.request(method, path, method === 'POST' ? {} : undefined, key, headers);
      if (res.status !== 400 || res.body?.error?.code !== 'VALIDATION_FAILED') wrong.push(`${method} ${path} ${key ? 'with' : 'without'} a key: ${res.status} ${JSON.stringify(res.body)}`);
    }
    assert.deepEqual(wrong, []);
  });

  test('leaves no error line in the log', () => {
    const errors = daemon.output().split('\n').filter((line) => /"level":(50|60)/.test(line));
    assert.deepEqual(errors, []);
  });
});
