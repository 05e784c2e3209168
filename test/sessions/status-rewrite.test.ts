// A status change is staged into the tick and nobody waits for it: when that tick is lost (here a store transaction
// failing inside it, on PostgreSQL also a row lock past the lock timeout), the daemon has the manager write the running
// sessions' statuses again, so that the store does not keep telling an older status (the cluster's database-outage
// test: a session CONNECTED on its node, CONNECTING in the store for good).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTickTransaction } from '../../src/store/db.js';
import { waitFor } from '../helpers/daemon.js';
import { hookedEngine, testSessionManager } from '../helpers/session-manager.js';

test("a status lost with its tick is written again once the manager is told of the loss", async () => {
  const { engine, hooks } = hookedEngine();
  const { manager, db, sessions } = testSessionManager(engine);
  const lost: unknown[] = [];
  const tick = createTickTransaction(db, (err) => {
    lost.push(err);
    manager.rewriteStatuses();
  });
  await manager.create({ name: 's', start: true });
  await tick.committed();
  const stored = async () => (await sessions.get('s'))!.status;
  assert.equal(await stored(), 'CONNECTING');

  // the session opens, and a store transaction fails in the same tick: the tick, CONNECTED with it, is rolled back
  hooks().connection({ kind: 'open', account: { phoneNumber: '+15550000001', pushName: null, platform: null, lid: null } as never });
  await assert.rejects(db.transaction(async () => { throw new Error('a transaction that fails'); })());
  await assert.rejects(tick.committed()!);
  assert.equal(lost.length, 1);
  assert.equal(await stored(), 'CONNECTING', 'the store lost CONNECTED');

  await waitFor(async () => (await stored()) === 'CONNECTED', 5_000, 'the status written again');
});
