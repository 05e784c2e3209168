// The health watchdog's last step restarts a deaf session: stop, then start again. An operator's stop that lands while
// that restart still disconnects the old connection wins: the session stays stopped, with nothing started behind it.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Engine, EngineSession } from '../../src/engine/types.js';
import { testSessionManager } from '../helpers/session-manager.js';

it("a stop during the watchdog's restart is not undone by it", async () => {
  let created = 0;
  let releaseDisconnect!: () => void;
  const disconnecting = new Promise<void>((resolve) => (releaseDisconnect = resolve));
  const engine = {
    name: 'sandbox',
    createSession: () => {
      created += 1;
      return { connect: async () => {}, disconnect: () => disconnecting } as unknown as EngineSession;
    },
  } as unknown as Engine;
  const { manager } = testSessionManager(engine);
  await manager.create({ name: 's' });
  await manager.start('s');
  assert.equal(created, 1);

  // the watchdog's restart (what its WatchedSession.restart calls), held while the old connection disconnects
  const restarting = (manager as unknown as { restartDeaf(name: string): Promise<void> }).restartDeaf('s');
  await new Promise((r) => setImmediate(r));
  const stopping = manager.stop('s');
  releaseDisconnect();
  await Promise.allSettled([restarting, stopping]);

  assert.equal(created, 1, 'no new connection was started after the stop');
  const row = await manager.get('s');
  assert.deepEqual([row.status, row.statusReason, row.shouldRun], ['DISCONNECTED', 'MANUAL_STOP', false]);
});
