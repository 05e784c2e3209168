// Issue 27 item 3, the hop between nodes: a request is sent on to the owner's own address with its path and query only
// (an absolute-form request target, `GET http://elsewhere/api/… HTTP/1.1`, named any host, which then got the request,
// the caller's key and the body); a hop is signed for one node, over its method, path, query and body, and accepted
// once. Two real daemons on one real PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { bodyHashOf, forwardUrl, signHop } from '../../src/cluster/forward.js';
import { CLUSTER_SECRET, MASTER_KEY, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { rawExchange, requestHead, within } from '../helpers/raw-http.js';

let server: TestPostgres;
const nodes = new Map<string, TestDaemon>();
const node = (id: string) => nodes.get(id)!;
/** a host the forward must never reach: it counts what it gets */
let trap: Server;
let trapped = 0;
/** a session n2 runs */
let onN2: string;

before(async () => {
  server = await startPostgres();
  const url = server.createDatabase('hops');
  for (const id of ['n1', 'n2']) nodes.set(id, await startDaemon({ env: { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: url, GATEWAY_NODE_ID: id, GATEWAY_LEASE_SECONDS: '4' } }));
  trap = createServer((req, res) => {
    trapped++;
    res.end('{}');
  });
  await new Promise<void>((done) => trap.listen(0, '127.0.0.1', done));
  await waitFor(async () => (await node('n1').request('GET', '/api/cluster')).body.data.nodes.length === 2, 10_000, 'two nodes');
  for (const name of ['h1', 'h2']) {
    const created = await node('n1').request('POST', '/api/sessions', { name, start: true, engine: 'sandbox' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  }
  const status = (await node('n1').request('GET', '/api/cluster')).body.data.nodes as Array<{ id: string; sessions: string[] }>;
  onN2 = status.find((n) => n.id === 'n2')!.sessions[0]!;
  assert.ok(onN2, JSON.stringify(status));
  assert.equal((await node('n1').request('POST', `/api/sandbox/sessions/${onN2}/pair`, { phoneNumber: '15550001111' })).status, 200);
  await waitFor(async () => (await node('n2').request('GET', `/api/sessions/${onN2}`)).body.data.status === 'CONNECTED', 10_000, `${onN2} CONNECTED`);
});

after(async () => {
  await Promise.all([...nodes.values()].map((daemon) => daemon.cleanup()));
  await new Promise((done) => trap?.close(done));
  server?.stop();
});

/** The headers of a hop from node `from` to node `to`, signed as a node signs it (or as the test alters it). */
function hop(from: string, to: string, method: string, target: string, body = ''): Record<string, string> {
  const at = Date.now();
  const nonce = randomBytes(16).toString('hex');
  const bodyHash = bodyHashOf(Buffer.from(body));
  const mac = signHop(Buffer.from(CLUSTER_SECRET), { from, to, at, nonce, method, target, bodyHash });
  return { 'X-Gateway-Forwarded-By': from, 'X-Gateway-Forward-Signature': `${at}.${nonce}.${mac.toString('hex')}`, 'X-Gateway-Body-Sha256': bodyHash };
}

describe('the hop between nodes', () => {
  test("the forward URL is the owner's origin with the request's path and query, whatever the request target named", () => {
    assert.equal(forwardUrl('http://10.0.0.12:3000', '/api/sessions/s1?x=1').href, 'http://10.0.0.12:3000/api/sessions/s1?x=1');
    assert.equal(forwardUrl('http://10.0.0.12:3000/', '//evil.example/api').origin, 'http://10.0.0.12:3000');
    assert.equal(forwardUrl('http://10.0.0.12:3000', '/\\evil.example/api').origin, 'http://10.0.0.12:3000');
    assert.throws(() => forwardUrl('http://10.0.0.12:3000', 'http://evil.example/api'), /must be a path/);
  });

  test('an absolute-form request target is sent to the owner, never to the host it names', async () => {
    const evil = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    const exchange = rawExchange(node('n1').url, requestHead('GET', `${evil}/api/sessions/${onN2}`, { Authorization: `Bearer ${MASTER_KEY}`, Connection: 'close' }));
    const answer = await within(exchange.answer, 10_000, 'the answer');
    assert.equal(trapped, 0, 'the request went to the host the target named');
    // served by n2 (forwarded to its own address), or refused: never sent elsewhere
    if (answer.status === 200) {
      assert.equal(answer.header('x-gateway-node'), 'n2');
      assert.equal(answer.json.data.name, onN2);
    } else {
      assert.equal(answer.status, 400, answer.body);
    }
  });

  test('a hop signed for this node is served once; replayed, for another node, or with another body, it is refused', async () => {
    const path = `/api/sessions/${onN2}`;
    const signed = hop('n1', 'n2', 'GET', path);
    const first = await node('n2').request('GET', path, undefined, undefined, signed);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const replayed = await node('n2').request('GET', path, undefined, undefined, signed);
    assert.equal(replayed.status, 401, JSON.stringify(replayed.body));
    assert.match(replayed.body.error.message, /replayed/);

    // signed for n1, sent to n2 (which runs the session and would serve it)
    const elsewhere = await node('n2').request('GET', path, undefined, undefined, hop('n2', 'n1', 'GET', path));
    assert.equal(elsewhere.status, 401, JSON.stringify(elsewhere.body));

    // a body the route reads itself (session in the path) and one it parses first (session in the body)
    const inbound = `/api/sandbox/sessions/${onN2}/inbound`;
    const message = JSON.stringify({ from: '15550002222', type: 'text', text: 'signed' });
    const served = await node('n2').request('POST', inbound, message, undefined, hop('n1', 'n2', 'POST', inbound, message));
    assert.equal(served.status, 200, JSON.stringify(served.body));
    const tampered = await node('n2').request('POST', inbound, message.replace('signed', 'changed'), undefined, hop('n1', 'n2', 'POST', inbound, message));
    assert.equal(tampered.status, 401, JSON.stringify(tampered.body));
    const send = { session: onN2, chatId: '15550003333@s.whatsapp.net', type: 'text', text: 'signed' };
    const tamperedSend = await node('n2').request('POST', '/api/messages/send', { ...send, text: 'changed' }, undefined, hop('n1', 'n2', 'POST', '/api/messages/send', JSON.stringify(send)));
    assert.equal(tamperedSend.status, 401, JSON.stringify(tamperedSend.body));

    // the nodes' own hops still go through, with bodies both ways
    const forwarded = await node('n1').request('POST', '/api/messages/send', send);
    assert.equal(forwarded.status, 200, JSON.stringify(forwarded.body));
    assert.equal(forwarded.headers.get('x-gateway-node'), 'n2');
    const forwardedInbound = await node('n1').request('POST', inbound, JSON.parse(message));
    assert.equal(forwardedInbound.status, 200, JSON.stringify(forwardedInbound.body));
    assert.equal(forwardedInbound.headers.get('x-gateway-node'), 'n2');
  });
});
