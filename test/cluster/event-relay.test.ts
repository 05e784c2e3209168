// Issue 22, every node's events on every node's live stream, on a real PostgreSQL (Debian's, started by the test): small
// and large events arrive whole and in order at the other nodes, never echoed back to their sender.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { splitText, startEventRelay, type EventRelay } from '../../src/cluster/event-relay.js';
import { connectPostgres, type PgSql } from '../../src/store/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let server: TestPostgres;
const connections: PgSql[] = [];
const relays: EventRelay[] = [];

before(async () => {
  server = await startPostgres();
});

after(async () => {
  await Promise.all(relays.map((relay) => relay.close()));
  await Promise.all(connections.map((sql) => sql.end({ timeout: 1 })));
  server?.stop();
});

async function node(id: string): Promise<{ relay: EventRelay; received: unknown[] }> {
  const sql = connectPostgres(server.url, { max: 2 });
  connections.push(sql);
  const received: unknown[] = [];
  const relay = await startEventRelay(sql, id, (event) => received.push(event));
  relays.push(relay);
  return { relay, received };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a text is split into parts of bounded size, never inside a surrogate pair, and joins back', () => {
  const text = `${'a'.repeat(2399)}😀${'é'.repeat(5000)}`;
  const parts = splitText(text);
  assert.equal(parts.join(''), text);
  assert.ok(parts.every((part) => part.length <= 2400 && Buffer.byteLength(part) <= 7200));
  assert.equal(parts[0]!.length, 2399, 'the emoji at the cut moved whole to the next part');
  assert.deepEqual(splitText(''), ['']);
});

test('events reach every other node in order, whole however large, and never come back to their sender', async () => {
  const [a, b, c] = await Promise.all([node('a'), node('b'), node('c')]);
  const big = { event: 'message.received', payload: { text: `${'é'.repeat(30_000)}😀${'x'.repeat(40_000)}`, n: -1 } };
  const sent: unknown[] = [];
  for (let n = 0; n < 100; n++) {
    const event = n === 50 ? big : { event: 'message.sent', payload: { n } };
    sent.push(event);
    await a.relay.publish(event);
  }
  await until(() => b.received.length === 100 && c.received.length === 100, `b got ${b.received.length}, c ${c.received.length} of 100`);
  assert.deepEqual(b.received, sent);
  assert.deepEqual(c.received, sent);
  assert.deepEqual(a.received, [], 'an event came back to its sender');
  // the other way round too, while a keeps publishing
  await Promise.all([b.relay.publish({ from: 'b' }), a.relay.publish({ from: 'a' })]);
  await until(() => a.received.length === 1 && c.received.length === 102, 'the last two events');
  assert.deepEqual(a.received, [{ from: 'b' }]);
});
