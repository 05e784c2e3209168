// Baileys' per-socket AsyncLocalStorage is replaced by facades over one shared instance (src/engine/baileys/async-storage.ts):
// the swap reaches ESM importers such as Baileys, ends with the build, and keeps each key store's transactions its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { addTransactionCapability, type SignalKeyStore } from '@whiskeysockets/baileys';
import { SharedAsyncStorage, withSharedAsyncStorage } from '../../src/engine/baileys/async-storage.js';

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, level: 'silent', child: () => silent } as never;

function memoryKeys(): SignalKeyStore & { data: Record<string, Record<string, unknown>> } {
  const data: Record<string, Record<string, unknown>> = {};
  return {
    data,
    async get(type, ids) {
      return Object.fromEntries(ids.filter((id) => data[type]?.[id] !== undefined).map((id) => [id, data[type]![id]])) as never;
    },
    async set(changes) {
      for (const [type, values] of Object.entries(changes)) Object.assign((data[type] ??= {}), values);
    },
  };
}

test('inside the build, an ESM import of AsyncLocalStorage constructs the shared facade; outside, the real class', () => {
  const inside = withSharedAsyncStorage(() => new AsyncLocalStorage());
  assert.ok(inside instanceof SharedAsyncStorage);
  assert.ok(new AsyncLocalStorage() instanceof AsyncLocalStorage);
  assert.throws(() => withSharedAsyncStorage(() => { throw new Error('build failed'); }), /build failed/);
  assert.ok(new AsyncLocalStorage() instanceof AsyncLocalStorage, 'the real class is back after a failed build');
});

test("Baileys' key-store transactions built on facades stay per store, nested across stores too", async () => {
  const options = { maxCommitRetries: 1, delayBetweenTriesMs: 1 };
  const rawA = memoryKeys();
  const rawB = memoryKeys();
  const [a, b] = withSharedAsyncStorage(() => [addTransactionCapability(rawA, silent, options), addTransactionCapability(rawB, silent, options)]);
  const session = (v: string) => ({ session: { peer: new Uint8Array([v.charCodeAt(0)]) } }) as never;

  await a.transaction(async () => {
    assert.equal(a.isInTransaction(), true);
    assert.equal(b.isInTransaction(), false, "A's transaction is not B's");
    await a.set(session('a'));
    assert.equal(rawA.data.session, undefined, "A's write waits for its commit");
    await b.transaction(async () => {
      assert.equal(b.isInTransaction(), true);
      await b.set(session('b'));
      assert.deepEqual(await a.get('session', ['peer']), { peer: new Uint8Array([97]) }, 'A still reads its own transaction');
    }, 'b');
    assert.deepEqual(rawB.data.session, { peer: new Uint8Array([98]) }, "B's own transaction committed when it ended");
    assert.equal(b.isInTransaction(), false);
  }, 'a');
  assert.deepEqual(rawA.data.session, { peer: new Uint8Array([97]) });
  assert.equal(a.isInTransaction(), false);
});
