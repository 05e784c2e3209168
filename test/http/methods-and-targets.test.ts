// What the router answers for a method a path does not take (any method, HTTP's or invented) and for a request target
// that is not a path: always the error envelope with a 4xx, a 405 with `Allow`, never a 500 or a stack in the log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange, requestHead, within, type RawAnswer } from '../helpers/raw-http.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  await daemon.cleanup();
});

async function send(method: string, target: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const exchange = rawExchange(daemon.url, requestHead(method, target, { Connection: 'close', ...headers }));
  try {
    return await within(exchange.answer, 10_000, `an answer to ${method} ${target}`);
  } finally {
    exchange.socket.destroy();
  }
}

describe('a method the path does not take', () => {
  for (const method of ['TRACE', 'QUERY', 'PROPFIND', 'SEARCH', 'MKCOL', 'PUT']) {
    test(`${method} /api/health → 405 METHOD_NOT_ALLOWED with Allow`, async () => {
      const answer = await send(method, '/api/health');
      assert.equal(answer.status, 405, answer.head);
      assert.equal(answer.json?.error?.code, 'METHOD_NOT_ALLOWED', answer.body);
      assert.equal(answer.header('allow'), 'GET, HEAD');
    });
  }

  test('on a path with parameters, Allow lists that path\'s methods; before authentication', async () => {
    const answer = await send('TRACE', '/api/sessions/anything');
    assert.equal(answer.status, 405, answer.head);
    assert.equal(answer.header('allow'), 'GET, HEAD, PATCH, DELETE');
  });

  test('a literal segment is not read as another route\'s parameter: DELETE …/groups/join is 405, not a group id', async () => {
    const answer = await send('DELETE', '/api/sessions/s1/groups/join', { Authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(answer.status, 405, answer.body);
    assert.equal(answer.json.error.code, 'METHOD_NOT_ALLOWED');
    assert.equal(answer.header('allow'), 'GET, HEAD, POST');
    const check = await send('GET', '/api/sessions/s1/contacts/check', { Authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(check.status, 405, check.body);
    assert.equal(check.header('allow'), 'POST');
  });

  test('OPTIONS lists the methods', async () => {
    const answer = await send('OPTIONS', '/api/sessions');
    assert.equal(answer.status, 200, answer.head);
    assert.equal(answer.header('allow'), 'GET, HEAD, POST');
  });

  test('an unknown method on an unknown path is 404', async () => {
    const answer = await send('TRACE', '/api/no/such/route');
    assert.equal(answer.status, 404, answer.head);
    assert.equal(answer.json.error.code, 'ROUTE_NOT_FOUND');
  });
});

describe('a request target that is not origin-form', () => {
  const targets = [
    ['absolute-form', 'GET', 'http://localhost/api/health'],
    ['absolute-form to another host', 'GET', 'http://example.com/api/sessions'],
    ['absolute-form with a key', 'GET', 'http://localhost/api/sessions'],
    ['asterisk-form', 'OPTIONS', '*'],
    ['asterisk-form on GET', 'GET', '*'],
    ['authority-form', 'CONNECT', 'localhost:1'],
  ] as const;
  for (const [what, method, target] of targets) {
    test(`${what} (${method} ${target}) → 400 MALFORMED_REQUEST, before authentication`, async () => {
      const answer = await send(method, target, what.includes('key') ? { Authorization: `Bearer ${MASTER_KEY}` } : {});
      assert.equal(answer.status, 400, answer.head);
      assert.equal(answer.json?.error?.code, 'MALFORMED_REQUEST', answer.body);
      assert.ok(answer.header('x-request-id'));
    });
  }
});

test('the daemon logged nothing as failed', () => {
  assert.doesNotMatch(daemon.output(), /request failed|"level":50/);
});
