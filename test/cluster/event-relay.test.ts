// Issue 22, every node's events on every node's live stream, on a real PostgreSQL (Debian's, started by the test): small
// and large messages arrive whole and in order at the other nodes, never echoed back to their sender, and a message
// published in a transaction that rolls back is never heard.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAssembler, encodeMessage, splitText, type RelayMessage } from '../../src/cluster/event-relay.js';
import { createTickTransaction } from '../../src/store/db.js';
import { TickAbortedError } from '../../src/store/sql.js';
import { createNotifier } from '../../src/store/notify.js';
import type { PgDb } from '../../src/store/pg-db.js';
import { pgStores, startPostgres, type TestPostgres } from '../helpers/postgres.js';

const CHANNEL = 'relay_test';
let server: TestPostgres;
const databases = pgStores();

before(async () => {
  server = await startPostgres();
});

after(async () => {
  await databases.closeAll();
  server?.stop();
});

async function node(id: string): Promise<{ publish(message: RelayMessage): Promise<void>; db: PgDb; received: RelayMessage[] }> {
  const db = await databases.open(server.url);
  const received: RelayMessage[] = [];
  await db.listen(CHANNEL, createAssembler(id, (message) => received.push(message)));
  const notify = createNotifier(db, CHANNEL);
  // a transaction that fails takes its tick with it (the rolled-back publish below): any other loss is a failure
  const tick = createTickTransaction(db, (err) => {
    if (!(err instanceof TickAbortedError)) assert.fail(String(err));
  });
  return {
    db,
    received,
    publish(message) {
      tick.join();
      notify(encodeMessage(id, message));
      return tick.committed()!;
    },
  };
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

test('messages reach every other node in order, whole however large, and never come back to their sender', async () => {
  const [a, b, c] = await Promise.all([node('a'), node('b'), node('c')]);
  const big: RelayMessage = { kind: 'event', event: { event: 'message.received', payload: { text: `${'é'.repeat(30_000)}😀${'x'.repeat(40_000)}`, n: -1 } } };
  const sent: RelayMessage[] = [];
  for (let n = 0; n < 100; n++) {
    const message: RelayMessage = n === 50 ? big : { kind: 'event', event: { event: 'message.sent', payload: { n } } };
    sent.push(message);
    await a.publish(message);
  }
  await until(() => b.received.length === 100 && c.received.length === 100, `b got ${b.received.length}, c ${c.received.length} of 100`);
  assert.deepEqual(b.received, sent);
  assert.deepEqual(c.received, sent);
  assert.deepEqual(a.received, [], 'a message came back to its sender');
  // the other way round too, while a keeps publishing
  await Promise.all([b.publish({ kind: 'changed', topic: 'keys', ids: ['k1'] }), a.publish({ kind: 'changed', topic: 'webhooks' })]);
  await until(() => a.received.length === 1 && c.received.length === 102, 'the last two messages');
  assert.deepEqual(a.received, [{ kind: 'changed', topic: 'keys', ids: ['k1'] }]);
});

test('a message published in a transaction that rolls back is never heard; the next one is', async () => {
  const [d, e] = await Promise.all([node('d'), node('e')]);
  const notify = createNotifier(d.db, CHANNEL);
  const rolledBack = d.db.transaction(async () => {
    notify(encodeMessage('d', { kind: 'changed', topic: 'lost' }));
    throw new Error('rolled back');
  });
  await assert.rejects(rolledBack(), /rolled back/);
  await d.publish({ kind: 'changed', topic: 'kept' });
  await until(() => e.received.length >= 1, 'the committed message');
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(e.received, [{ kind: 'changed', topic: 'kept' }]);
});
