// Shared caps drained by one caller (issue 27, item 3.3): under the caps on event streams, webhooks and URL downloads
// each API key or client token has a quota, and the last places are the master key's, whoever filled the rest.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { openEventStream } from '../helpers/events.js';
import { png } from '../engine/samples.js';
import { principalId, quotaRefusal } from '../../src/quota.js';

// streams: 8, 3 a key, the last 4 the master key's; webhooks: 14, 3 a key, the last 10 the master key's;
// downloads: 1 running + 4 waiting, 2 a key, the last 2 the master key's
const CONFIG = `
events:
  maxStreams: 8
  maxStreamsPerKey: 3
webhooks:
  maxWebhooks: 14
  maxWebhooksPerKey: 3
media:
  urlFetchConcurrency: 1
  urlFetchQueue: 4
  urlFetchPerKey: 2
`;
const B = '+15550180002';

let daemon: TestDaemon;
let keyA: string;
let keyB: string;
const streams: AbortController[] = [];

before(async () => {
  daemon = await startDaemon({ config: CONFIG, env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'a', '+15550180001');
  await pairedSession(daemon, 'b', B);
  const key = async (name: string, sessions?: string[]) => {
    const res = await daemon.request('POST', '/api/admin/keys', { name, scopes: ['webhooks:manage', 'messages:send'], ...(sessions ? { sessions } : {}) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.key as string;
  };
  keyA = await key('a-only', ['a']);
  keyB = await key('any');
});
after(async () => {
  for (const stream of streams) stream.abort();
  await daemon.cleanup();
});

test('the quota rules: a quota per caller, the reserve kept for the master key, never below one place', () => {
  const limits = { max: 8, perPrincipal: 3, masterReserve: 4 };
  const key = { kind: 'key', id: '1' } as never;
  assert.equal(quotaRefusal(limits, key, { total: 2, others: 2, own: 2 }, 'x'), undefined);
  assert.match(quotaRefusal(limits, key, { total: 3, others: 3, own: 3 }, 'x')!, /quota/);
  assert.match(quotaRefusal(limits, key, { total: 4, others: 4, own: 0 }, 'x')!, /master key/);
  assert.equal(quotaRefusal(limits, key, { total: 7, others: 3, own: 0 }, 'x'), undefined, "the master key's places do not count against the others");
  assert.equal(quotaRefusal(limits, { kind: 'master' }, { total: 7, others: 4, own: 3 }, 'x'), undefined);
  assert.match(quotaRefusal(limits, { kind: 'master' }, { total: 8, others: 4, own: 4 }, 'x')!, /limit/);
  assert.match(quotaRefusal(limits, key, { total: 8, others: 1, own: 0 }, 'x')!, /limit/);
  assert.equal(quotaRefusal({ max: 2, perPrincipal: 5, masterReserve: 4 }, key, { total: 0, others: 0, own: 0 }, 'x'), undefined);
  assert.equal(principalId(undefined), 'daemon');
});

const openStream = (key: string) => openEventStream(daemon, key, streams);

test('event streams: a key holds at most its quota, the others stop short of the reserve, the master key still gets one', async () => {
  for (let i = 0; i < 3; i++) assert.equal(await openStream(keyA), 200);
  assert.equal(await openStream(keyA), 503, "past the key's quota");
  assert.equal(await openStream(keyB), 200);
  assert.equal(await openStream(keyB), 503, 'the last 4 of 8 are kept for the master key');
  for (let i = 0; i < 4; i++) assert.equal(await openStream(daemon.masterKey), 200);
  assert.equal(await openStream(daemon.masterKey), 503, 'the global cap still holds');
  // a closed stream gives its place back to its key
  streams.shift()!.abort();
  await waitFor(async () => (await openStream(keyB)) === 200, 5000, 'a place after a stream of key a closed');
});

test('webhooks: a key registers at most its quota, the others stop short of the reserve, the master key still registers', async () => {
  const register = (key: string, n: number) => daemon.request('POST', '/api/webhooks', { url: `http://127.0.0.1:9/hook-${n}`, session: 'a' }, key);
  for (let i = 0; i < 3; i++) assert.equal((await register(keyA, i)).status, 201);
  const fourth = await register(keyA, 3);
  assert.equal(fourth.status, 409);
  assert.equal(fourth.body.error.code, 'LIMIT_REACHED');
  assert.match(fourth.body.error.message, /quota/);
  assert.equal((await register(keyB, 4)).status, 201);
  const reserved = await register(keyB, 5);
  assert.equal(reserved.status, 409);
  assert.match(reserved.body.error.message, /master key/);
  assert.equal((await register(daemon.masterKey, 6)).status, 201);
});

describe('URL downloads', () => {
  let media: Server;
  let base: string;
  const held: ServerResponse[] = [];
  const hits: string[] = [];
  const image = png(16);

  before(async () => {
    media = createServer((req, res) => {
      hits.push(req.url ?? '');
      held.push(res);
    });
    await new Promise<void>((done) => media.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  });
  after(async () => {
    media.closeAllConnections();
    await new Promise<void>((done) => media.close(() => done()));
  });

  const send = (key: string, name: string) => daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'image', url: `${base}/${name}.png` }, key);
  const releaseOne = () => held.shift()!.writeHead(200, { 'Content-Type': 'image/png' }).end(image);

  test('a key holds at most its share of the pool, the others stop short of the reserve, the master key still gets a download', async () => {
    const a1 = send(keyA, 'a1');
    await waitFor(() => held.length === 1, 5000, 'the first download to start');
    const a2 = send(keyA, 'a2');
    const a3 = await send(keyA, 'a3');
    assert.equal(a3.status, 503, JSON.stringify(a3.body));
    assert.match(a3.body.error.message, /quota/);
    const b1 = send(keyB, 'b1');
    await waitFor(async () => {
      const refused = await send(keyB, `b-probe-${hits.length}`);
      return refused.status === 503 && /master key/.test(refused.body.error.message);
    }, 5000, 'the reserve to be reached');
    const master = send(daemon.masterKey, 'master');
    // the master key's download waits at the head of the queue: it runs next
    await new Promise((r) => setTimeout(r, 200));
    releaseOne();
    await waitFor(() => hits.at(-1) === '/master.png', 5000, "the master key's download to run next");
    while (hits.length < 4 || held.length) {
      if (held.length) releaseOne();
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const answer of [a1, a2, b1, master]) assert.equal((await answer).status, 200);
    assert.ok(!hits.includes('/a3.png'), 'a refused download is never fetched');
  });
});
