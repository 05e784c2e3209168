// Fuzz below the router: malformed HTTP/1.1 (request lines, header lines, framing, sizes) over a raw socket. Every
// request head ends, so each one gets an answer: never a 5xx, every 4xx in the error envelope with a code from the
// error table, and the daemon healthy afterwards.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { errorStatus } from '../../src/http/error-status.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange, requestHead, within } from '../helpers/raw-http.js';
import { ODD_METHODS } from './harness.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  await daemon.cleanup();
});

/** request targets in every form: paths (with and without routes), absolute URLs, `*`, `host:port` */
const TARGETS = ['/api/health', '/api/sessions', '/api/sessions/x/groups/join', '/api/nope', 'http://localhost/api/health', 'https://example.com/api/sessions', '*', 'localhost:1', 'example.com:443', 'api/health'];

const token = fc.string({ unit: fc.constantFrom(...'GETPOSTDELabc/_-%?#:;,. \t\u0000\u007f\u00e9'), minLength: 0, maxLength: 12 });
const requestLine = fc.oneof(
  fc.constantFrom('GET /api/health HTTP/1.1', 'GET /api/health HTTP/1.0', 'GET /api/health HTTP/9.9', 'GET /api/health', 'GET  /api/health HTTP/1.1', 'get /api/health HTTP/1.1',
    'GET http://x/api/health HTTP/1.1', 'GET * HTTP/1.1', 'CONNECT localhost:1 HTTP/1.1', 'BREW /api/health HTTP/1.1', 'GET /api/he alth HTTP/1.1',
    'GET /api/%zz HTTP/1.1', 'GET /\u0000 HTTP/1.1', 'GET /api/health?\u00ff HTTP/1.1', 'POST /api/sessions HTTP/1.1', ''),
  fc.tuple(fc.constantFrom(...ODD_METHODS, 'GET', 'POST', 'OPTIONS'), fc.constantFrom(...TARGETS)).map(([m, t]) => `${m} ${t} HTTP/1.1`),
  fc.tuple(token, token, fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2', '')).map(([m, p, v]) => `${m} /${p} ${v}`),
);
const headerLine = fc.oneof(
  fc.constantFrom('Host: localhost', 'Content-Length: 5', 'Content-Length: -1', 'Content-Length: 1e3', 'Content-Length: 5, 6', 'Content-Length: 99999999999999999999',
    'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked', 'Transfer-Encoding: x', ' folded: continuation', 'no colon', ': empty name', 'Bad Name: x',
    'X-A: \u0000', 'X-A: \u00e9', 'Expect: 100-continue', 'Expect: nonsense', 'Connection: upgrade', 'Upgrade: websocket', 'Authorization: Bearer', 'Content-Type: application/json'),
  fc.tuple(token, token).map(([k, v]) => `${k}: ${v}`),
  fc.nat({ max: 20_000 }).map((n) => `X-Big: ${'x'.repeat(n)}`),
);
const request = fc
  .tuple(requestLine, fc.array(headerLine, { maxLength: 5 }), fc.boolean(), fc.constantFrom('', '{}', 'hello', '0\r\n\r\n', '5\r\nhello\r\n0\r\n\r\n'))
  .map(([line, headers, host, body]) => [line, ...(host ? ['Host: localhost'] : []), ...headers].join('\r\n') + '\r\n\r\n' + body);

test('malformed HTTP/1.1 gets a 4xx in the error envelope, never a 5xx or no answer', async () => {
  const details = await fc.check(
    fc.asyncProperty(request, async (text) => {
      const exchange = rawExchange(daemon.url, text);
      try {
        const answer = await within(exchange.answer, 10_000, 'an answer');
        assert.ok(answer.status >= 100 && answer.status < 500, `status ${answer.status}: ${answer.head}`);
        if (answer.status === 100) return; // the interim answer to Expect: 100-continue; the final one follows the body
        assert.ok(answer.header('x-request-id'), `no X-Request-Id: ${answer.head}`);
        if (answer.status >= 400 && !/^HEAD /.test(text)) {
          const code = answer.json?.error?.code as keyof typeof errorStatus;
          assert.ok(code in errorStatus, `not the error envelope: ${answer.head}\n${answer.body}`);
          assert.equal(errorStatus[code], answer.status, `${code} answered ${answer.status}`);
        }
      } finally {
        exchange.socket.destroy();
      }
    }),
    { seed: 16_019, numRuns: 400 },
  );
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  assert.ok(!details.failed, `seed ${details.seed}, path ${details.counterexamplePath}, request ${JSON.stringify(details.counterexample?.[0])}: ${reason}`);
  const health = await daemon.request('GET', '/api/health', undefined, null);
  assert.equal(health.status, 200);
  assert.doesNotMatch(daemon.output(), /request failed/);
});

test('every method, on every form of request target: a target that is not a path 400, a 405 with Allow', async () => {
  const details = await fc.check(
    fc.asyncProperty(fc.constantFrom(...ODD_METHODS.filter((m) => m === m.toUpperCase()), 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), fc.constantFrom(...TARGETS), async (method, target) => {
      const exchange = rawExchange(daemon.url, requestHead(method, target, { Connection: 'close' }));
      try {
        const answer = await within(exchange.answer, 10_000, 'an answer');
        assert.ok(answer.header('x-request-id'), answer.head);
        if (!target.startsWith('/')) {
          assert.equal(answer.status, 400, answer.head);
          assert.equal(answer.json?.error?.code, 'MALFORMED_REQUEST', answer.body);
        } else {
          assert.ok(answer.status < 500, answer.head);
          if (answer.status === 405) assert.ok(answer.header('allow'), answer.head);
        }
      } finally {
        exchange.socket.destroy();
      }
    }),
    { seed: 27_003, numRuns: 300 },
  );
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  assert.ok(!details.failed, `seed ${details.seed}, ${JSON.stringify(details.counterexample)}: ${reason}`);
  assert.doesNotMatch(daemon.output(), /request failed/);
});
