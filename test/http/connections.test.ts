// Connections held without a key (issue 27, item 3.4): a request answered before its body was read gets
// `Connection: close` and its connection is closed without reading the rest; one client address holds at most
// server.maxConnectionsPerAddress connections, one more is answered 503 and closed as it is accepted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { rawExchange, requestHead, within, type RawExchange } from '../helpers/raw-http.js';

let daemon: TestDaemon;
const open: RawExchange[] = [];

before(async () => {
  // the default request timeout (60 s): a drained body would hold its connection far past the waits below
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' }, config: 'server:\n  maxConnectionsPerAddress: 4\n' });
});
after(async () => {
  for (const exchange of open) exchange.socket.destroy();
  await daemon.cleanup();
});

function exchange(head: string, body?: string, from?: string): RawExchange {
  const made = rawExchange(daemon.url, head, body, { localAddress: from });
  open.push(made);
  return made;
}

test('an unauthenticated body is refused with Connection: close and the connection closed, the body unread', async () => {
  const refused = exchange(requestHead('POST', '/api/messages/send', { 'Content-Type': 'application/json', 'Content-Length': 10 * 1024 * 1024 }), '{"session":"a"');
  const answer = await within(refused.answer, 10_000, 'the 401');
  assert.equal(answer.status, 401);
  assert.equal(answer.header('connection'), 'close');
  // the rest of the 10 MB never comes; the daemon does not wait for it
  await within(refused.closed, 10_000, 'the close of the refused connection');
});

test('a request whose body was read keeps its connection', async () => {
  const body = JSON.stringify({ name: 'kept' });
  const kept = exchange(requestHead('POST', '/api/sessions', { Authorization: `Bearer ${daemon.masterKey}`, 'Content-Type': 'application/json', 'Content-Length': body.length }), body);
  const answer = await within(kept.answer, 10_000, 'the answer');
  assert.equal(answer.status, 201);
  assert.notEqual(answer.header('connection'), 'close');
  kept.socket.destroy();
});

test('one address holds at most maxConnectionsPerAddress connections; others are not affected', async () => {
  // from an address of its own, so that no other connection of this test process counts
  const address = '127.0.0.3';
  const health = requestHead('GET', '/api/health');
  const held = [exchange(health, '', address), exchange(health, '', address), exchange(health, '', address), exchange(health, '', address)];
  for (const connection of held) assert.equal((await within(connection.answer, 10_000, 'health')).status, 200);
  // a fifth connection from the same address is refused as it is accepted, before it sends anything
  const fifth = exchange('', '', address);
  const refused = await within(fifth.answer, 10_000, 'the refusal of a fifth connection');
  assert.equal(refused.status, 503);
  assert.equal(refused.json.error.code, 'SERVER_BUSY');
  await within(fifth.closed, 10_000, 'the close of the fifth connection');
  // another address is not refused
  const other = exchange(health, '', '127.0.0.4');
  assert.equal((await within(other.answer, 10_000, 'health from another address')).status, 200);
  other.socket.destroy();
  // the host's own address is exempt by default (server.connectionCapExemptAddresses)
  const local = Array.from({ length: 6 }, () => exchange(health, '', '127.0.0.1'));
  for (const connection of local) assert.equal((await within(connection.answer, 10_000, 'health from 127.0.0.1')).status, 200);
  for (const connection of local) connection.socket.destroy();
  // a closed connection frees its place
  held[0]!.socket.destroy();
  await waitFor(async () => {
    const again = exchange(health, '', address);
    const answer = await again.answer.catch(() => undefined);
    again.socket.destroy();
    return answer?.status === 200;
  }, 10_000, 'a place after one connection closed');
});
