// Requests Node's HTTP parser refuses before the app (bad request line, headers over 16 KB, headers that never end)
// are answered in the error envelope with a code from the error table, not with Node's bare status line.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorStatus } from '../../src/http/error-status.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange, requestHead, within, type RawAnswer } from '../helpers/raw-http.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ config: 'server:\n  requestTimeoutMs: 2000\n  headersTimeoutMs: 1000\n' });
});
after(async () => {
  await daemon.cleanup();
});

function assertEnvelope(answer: RawAnswer, code: string): void {
  assert.equal(answer.status, errorStatus[code as keyof typeof errorStatus], answer.head);
  assert.equal(answer.json?.error?.code, code, answer.body);
  assert.equal(typeof answer.json.error.message, 'string');
  assert.ok(answer.header('x-request-id'));
}

test('a malformed request line is 400 MALFORMED_REQUEST in the error envelope', async () => {
  const exchange = rawExchange(daemon.url, 'GET /api/health HTTP/1.1 extra\r\nHost: localhost\r\n\r\n');
  assertEnvelope(await within(exchange.answer, 10_000, 'an answer'), 'MALFORMED_REQUEST');
  await within(exchange.closed, 10_000, 'the connection to close');
});

test('a malformed request line with a large body still gets its 400: the rest of the body does not reset the connection first', async () => {
  const body = Buffer.alloc(8_000_000, 'x');
  // the reset was a race the body usually lost: several tries
  for (let i = 0; i < 6; i += 1) {
    const exchange = rawExchange(daemon.url, `LINK localhost:1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n`, body);
    assertEnvelope(await within(exchange.answer, 10_000, 'an answer'), 'MALFORMED_REQUEST');
    await within(exchange.closed, 15_000, 'the connection to close');
  }
});

test('a header line without a colon is 400 MALFORMED_REQUEST', async () => {
  const exchange = rawExchange(daemon.url, 'GET /api/health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n');
  assertEnvelope(await within(exchange.answer, 10_000, 'an answer'), 'MALFORMED_REQUEST');
});

test('headers over 16 KB are 431 HEADERS_TOO_LARGE in the error envelope', async () => {
  const exchange = rawExchange(daemon.url, requestHead('GET', '/api/health', { 'X-Big': 'x'.repeat(20_000) }));
  assertEnvelope(await within(exchange.answer, 10_000, 'an answer'), 'HEADERS_TOO_LARGE');
  await within(exchange.closed, 10_000, 'the connection to close');
});

test('headers that never end are 408 REQUEST_TIMEOUT in the error envelope, and the connection closes', async () => {
  const exchange = rawExchange(daemon.url, 'GET /api/health HTTP/1.1\r\nHost: localhost\r\n');
  assertEnvelope(await within(exchange.answer, 15_000, 'an answer'), 'REQUEST_TIMEOUT');
  await within(exchange.closed, 10_000, 'the connection to close');
});

test('CONNECT is answered in the error envelope (Node dropped the connection without an answer): its authority-form target 400, a path 405 with Allow', async () => {
  const tunnel = rawExchange(daemon.url, 'CONNECT localhost:1 HTTP/1.1\r\nHost: localhost:1\r\n\r\n');
  assertEnvelope(await within(tunnel.answer, 10_000, 'an answer'), 'MALFORMED_REQUEST');
  const onPath = rawExchange(daemon.url, 'CONNECT /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  const answer = await within(onPath.answer, 10_000, 'an answer');
  assertEnvelope(answer, 'METHOD_NOT_ALLOWED');
  assert.equal(answer.header('allow'), 'GET, HEAD');
  await within(onPath.closed, 10_000, 'the connection to close');
});

test('an unknown Expect and a missing Host reach the app (Node answered a bare 417 and 400)', async () => {
  const expect = await within(rawExchange(daemon.url, requestHead('GET', '/api/health', { Expect: 'nonsense' })).answer, 10_000, 'an answer');
  assert.equal(expect.status, 200, expect.head);
  const hostless = await within(rawExchange(daemon.url, 'GET /api/nope HTTP/1.1\r\n\r\n').answer, 10_000, 'an answer');
  assertEnvelope(hostless, 'ROUTE_NOT_FOUND');
});

test('the daemon logged nothing as failed', () => {
  assert.doesNotMatch(daemon.output(), /request failed/);
});
