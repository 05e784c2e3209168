// In a cluster a session given up (its lease lost or moved) is handed on only once its last events are committed: the
// next node numbers the session's events on from the store, and would give an event still in the open tick the same
// number again.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Engine, EngineSession } from '../../src/engine/types.js';
import { testSessionManager } from '../helpers/session-manager.js';

it('relinquish settles only once the writes made before it are committed', async () => {
  const engine = {
    name: 'sandbox',
    createSession: () => ({ connect: async () => {}, disconnect: async () => {} }) as unknown as EngineSession,
  } as unknown as Engine;
  let commit: () => void = () => {};
  let waiting: Promise<void> | undefined;
  const ticks = {
    mark: () => 1,
    committed: () => (waiting ??= new Promise<void>((done) => (commit = done))),
    committedSince: () => undefined,
    writeAfter: (_mark: number, write: () => Promise<void> | undefined | void) => Promise.resolve(write()).then(() => {}),
  };
  const { manager } = testSessionManager(engine, { ticks });
  await manager.create({ name: 's', start: true });
  let settled = false;
  const relinquished = manager.relinquish('s').then(() => (settled = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(settled, false, 'the tick with the session\'s last events is still open');
  commit();
  await relinquished;
  assert.equal(settled, true);
});
