// Overload protection: caps on requests in flight, large bodies being read and event streams answer 503 SERVER_BUSY
// with Retry-After at once; the server cuts off slow headers and slow bodies, and event streams outlive those timeouts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents } from '../helpers/events.js';
import { rawExchange, requestHead, within, type RawExchange } from '../helpers/raw-http.js';

const CONFIG = `
server:
  bodyLimitBytes: 4096
  mediaBodyLimitBytes: 65536
  maxLargeBodies: 1
  maxRequestsInFlight: 3
  requestTimeoutMs: 2000
  headersTimeoutMs: 1000
events:
  maxStreams: 2
`;

let daemon: TestDaemon;
const open: RawExchange[] = [];
before(async () => {
  daemon = await startDaemon({ config: CONFIG });
});
after(async () => {
  for (const exchange of open) exchange.socket.destroy();
  await daemon.cleanup();
});

/** An authenticated POST whose body is announced but never finished: it stays in flight until the socket closes. */
function stuckPost(path: string, length: number): RawExchange {
  const exchange = rawExchange(daemon.url, requestHead('POST', path, { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'application/json', 'Content-Length': length }), '{');
  open.push(exchange);
  return exchange;
}

describe('requests in flight (server.maxRequestsInFlight)', () => {
  test('past the cap → 503 SERVER_BUSY with Retry-After; health exempt; free again once they finish', async () => {
    const stuck = [stuckPost('/api/sessions', 100), stuckPost('/api/sessions', 100), stuckPost('/api/sessions', 100)];
    await waitFor(async () => (await daemon.request('GET', '/api/sessions')).status === 503, 5000, 'the in-flight cap to be reached');
    const busy = await daemon.request('GET', '/api/sessions');
    assert.equal(busy.status, 503);
    assert.equal(busy.body.error.code, 'SERVER_BUSY');
    assert.match(busy.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal((await daemon.request('GET', '/api/health', undefined, null)).status, 200);
    assert.equal((await daemon.request('GET', '/metrics')).status, 200);
    for (const exchange of stuck) exchange.socket.destroy();
    await waitFor(async () => (await daemon.request('GET', '/api/sessions')).status === 200, 5000, 'the cap to free up');
  });
});

describe("one client's share of the requests in flight (server.maxRequestsInFlightPerKey)", () => {
  let shared: TestDaemon;
  const held: RawExchange[] = [];
  before(async () => {
    shared = await startDaemon({ config: 'server:\n  maxRequestsInFlight: 16\n  maxRequestsInFlightPerKey: 2\n' });
  });
  after(async () => {
    for (const exchange of held) exchange.socket.destroy();
    await shared.cleanup();
  });

  async function newKey(name: string): Promise<string> {
    const res = await shared.request('POST', '/api/account/keys', { name, scopes: ['sessions:manage', 'sessions:read'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.key as string;
  }

  test('a key past its share → 503 SERVER_BUSY + Retry-After for it alone; another key and the master key still pass', async () => {
    const flooder = await newKey('flooder');
    const other = await newKey('other');
    for (let i = 0; i < 2; i++) {
      const exchange = rawExchange(shared.url, requestHead('POST', '/api/sessions', { Authorization: `Bearer ${flooder}`, 'Content-Type': 'application/json', 'Content-Length': 100 }), '{');
      held.push(exchange);
    }
    // the held requests are let in once their key is looked up (on PostgreSQL, a round trip): a GET of the same key made
    // meanwhile would take the second place itself and turn one of them away
    await new Promise((r) => setTimeout(r, 500));
    await waitFor(async () => (await shared.request('GET', '/api/sessions', undefined, flooder)).status === 503, 5000, "the flooding key's share to be reached");
    const busy = await shared.request('GET', '/api/sessions', undefined, flooder);
    assert.equal(busy.status, 503);
    assert.equal(busy.body.error.code, 'SERVER_BUSY');
    assert.match(busy.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal((await shared.request('GET', '/api/sessions', undefined, other)).status, 200);
    assert.equal((await shared.request('POST', '/api/sessions', { name: 'fair', engine: 'sandbox' }, other)).status, 201);
    assert.equal((await shared.request('GET', '/api/sessions')).status, 200);
    for (const exchange of held.splice(0)) exchange.socket.destroy();
    await waitFor(async () => (await shared.request('GET', '/api/sessions', undefined, flooder)).status === 200, 5000, "the flooding key's share to free up");
  });

  test('unauthenticated bodies that never finish are answered 401 and hold no place: a key still gets through', async () => {
    const key = await newKey('after-junk');
    const junk = Array.from({ length: 20 }, () =>
      rawExchange(shared.url, requestHead('POST', '/api/messages/send', { 'Content-Type': 'application/json', 'Content-Length': 60_000 }), '{"x":"'),
    );
    held.push(...junk);
    for (const exchange of junk) assert.equal((await within(exchange.answer, 5000, 'a 401 before the body')).status, 401);
    assert.equal((await shared.request('GET', '/api/sessions', undefined, key)).status, 200);
    for (const exchange of held.splice(0)) exchange.socket.destroy();
  });
});

describe('large bodies (server.maxLargeBodies)', () => {
  test('a second body over the small limit read at once → 503 SERVER_BUSY; small bodies still pass', async () => {
    const first = stuckPost('/api/messages/send', 60_000);
    await waitFor(async () => {
      const second = await daemon.request('POST', '/api/messages/send', { session: 'x', chatId: '15550001111', text: 'y'.repeat(8000) });
      return second.status === 503 && second.body.error.code === 'SERVER_BUSY' && second.headers.get('retry-after');
    }, 5000, 'a second large body to be refused');
    const small = await daemon.request('POST', '/api/messages/send', { session: 'x', chatId: '15550001111', text: 'hi' });
    assert.notEqual(small.status, 503, JSON.stringify(small.body));
    first.socket.destroy();
    await waitFor(async () => (await daemon.request('POST', '/api/messages/send', { session: 'x', chatId: '15550001111', text: 'y'.repeat(8000) })).status !== 503, 5000, 'the large-body slot to free up');
  });

  test('a non-media route refuses a body over server.bodyLimitBytes', async () => {
    const res = await daemon.request('POST', '/api/sessions', { name: 'big', padding: 'x'.repeat(5000) });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
  });
});

describe('event streams (events.maxStreams)', () => {
  test('past the cap → 503 SERVER_BUSY with Retry-After; a closed stream frees its place', async () => {
    const first = await collectEvents(daemon);
    const second = await collectEvents(daemon);
    const third = await daemon.request('GET', '/api/events/stream');
    assert.equal(third.status, 503);
    assert.equal(third.body.error.code, 'SERVER_BUSY');
    assert.match(third.headers.get('retry-after') ?? '', /^\d+$/);
    first.close();
    const again = await waitFor(async () => {
      try {
        return await collectEvents(daemon);
      } catch {
        return undefined;
      }
    }, 5000, 'a place for a new stream');
    again.close();
    second.close();
  });
});

describe('server timeouts', () => {
  test('headers that never finish are cut off (server.headersTimeoutMs)', async () => {
    const exchange = rawExchange(daemon.url, 'GET /api/health HTTP/1.1\r\nHost: localhost\r\n');
    open.push(exchange);
    await within(exchange.closed, 15_000, 'close of a connection whose headers never finish');
  });

  test('a body that never finishes is cut off (server.requestTimeoutMs)', async () => {
    const exchange = rawExchange(daemon.url, requestHead('POST', '/api/sessions', { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'application/json', 'Content-Length': 100 }), '{');
    open.push(exchange);
    await within(exchange.closed, 15_000, 'close of a connection whose body never finishes');
  });

  test('a refused body is discarded up to the media limit, then the connection is closed', async () => {
    const exchange = rawExchange(daemon.url, requestHead('POST', '/api/messages/send', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
    open.push(exchange);
    const answer = await within(exchange.answer, 10_000, 'the 401 of an unauthenticated chunked body');
    assert.equal(answer.status, 401);
    const chunk = 'x'.repeat(16 * 1024);
    const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    let closed = false;
    void exchange.closed.then(() => (closed = true));
    for (let i = 0; i < 64 && !closed; i++) {
      exchange.write(frame);
      await sleep(5);
    }
    await within(exchange.closed, 10_000, 'close of a connection still sending a refused body past the media limit');
  });

  test('an event stream outlives the request and headers timeouts and keeps delivering', async () => {
    const events = await collectEvents(daemon);
    try {
      await sleep(3500); // longer than requestTimeoutMs + one timeout check
      await daemon.request('POST', '/api/sessions', { name: 'late', start: true, engine: 'sandbox' });
      await events.next((e) => e.session === 'late', 5000, 'an event on a stream older than the request timeout');
    } finally {
      events.close();
    }
  });
});

describe('server settings', () => {
  test('defaults, and a headers timeout longer than the request timeout is refused naming the setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-server-settings-'));
    try {
      const path = join(dir, 'gateway.yaml');
      writeFileSync(path, 'auth:\n  masterKey: svc_master_test_0123456789abcdef0123456789\n');
      const config = loadConfig({ configPath: path, env: {} });
      assert.deepEqual(config.server, {
        bodyLimitBytes: 1048576,
        mediaBodyLimitBytes: 104857600,
        maxLargeBodies: 4,
        maxRequestsInFlight: 256,
        maxRequestsInFlightPerKey: 64,
        maxConnections: 1024,
        maxConnectionsPerAddress: 64,
        connectionCapExemptAddresses: ['127.0.0.1', '::1', '::ffff:127.0.0.1'],
        requestTimeoutMs: 60000,
        headersTimeoutMs: 10000,
      });
      assert.equal(config.events.maxStreams, 64);
      writeFileSync(path, 'server:\n  requestTimeoutMs: 5000\n  headersTimeoutMs: 6000\n');
      assert.throws(() => loadConfig({ configPath: path, env: {} }), (err: unknown) => err instanceof ConfigError && /server\.headersTimeoutMs/.test(err.message));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
