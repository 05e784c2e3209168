// In a cluster a session's lease is taken before it starts. A start or an adoption whose reads fail before the session's
// runtime exists (the database restarting) must give that lease back: a lease kept with nothing running is renewed
// forever, and no node runs the session again (the fresh-clone CI's database-outage test: 8 of 9 sessions CONNECTED).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionPlacement } from '../../src/cluster/cluster.js';
import type { Engine, EngineSession } from '../../src/engine/types.js';
import { testSessionManager } from '../helpers/session-manager.js';

/** `network`: an engine that connects to a network, whose adoptions are queued (restoreRatePerSecond) */
function cluster({ network = false } = {}) {
  const held = new Set<string>();
  const placement: SessionPlacement = {
    claim: async (session) => (held.add(session), true),
    release: async (session) => void held.delete(session),
    epochOf: (session) => (held.has(session) ? 1 : undefined),
  };
  let storeDown = false;
  /** reads that fail next, whatever storeDown says */
  let failNext = 0;
  const engine = {
    name: 'sandbox',
    connectsToNetwork: network,
    createSession: () => ({ connect: async () => {}, disconnect: async () => {} }) as unknown as EngineSession,
  } as unknown as Engine;
  const { manager: sessions, sessions: sessionsRepo, authState } = testSessionManager(engine, {
    placement,
    settings: { reconnectBaseMs: 1, reconnectMaxMs: 1, reconnectMaxAttempts: 5, restoreRatePerSecond: 1000 },
  });
  // the reads a launch makes before its runtime exists fail while the store is down
  const forSession = authState.forSession.bind(authState);
  authState.forSession = (name: string) => {
    const store = forSession(name);
    const read = async () => {
      // a round trip, so that two launches' reads overlap
      await new Promise((r) => setTimeout(r, 10));
      if (storeDown || (failNext > 0 && failNext--)) throw new Error('PostgreSQL is unreachable');
      return store.isEmpty();
    };
    return { ...store, isEmpty: read };
  };
  return { sessions, sessionsRepo, held, down: (value: boolean) => (storeDown = value), failNextRead: () => (failNext = 1) };
}

describe('session manager in a cluster: the lease of a launch that failed before it ran', () => {
  it('is given back by an adoption whose reads failed, and the session is adopted once the store answers', async () => {
    const c = cluster();
    await c.sessions.create({ name: 's' });
    c.sessionsRepo.setShouldRun('s', true);
    c.down(true);
    await assert.rejects(c.sessions.adopt('s'), /unreachable/);
    assert.equal(c.held.has('s'), false, 'the lease is not kept for a session that does not run');
    c.down(false);
    await c.sessions.adopt('s');
    assert.equal(c.held.has('s'), true);
    assert.equal((await c.sessions.get('s')).status, 'CONNECTING');
  });

  it('is given back by a start whose reads failed, which answers with the failure', async () => {
    const c = cluster();
    await c.sessions.create({ name: 's' });
    c.down(true);
    await assert.rejects(c.sessions.start('s'), /unreachable/);
    assert.equal(c.held.has('s'), false);
    c.down(false);
    assert.equal(await c.sessions.start('s'), true);
    assert.equal(c.held.has('s'), true);
  });

  it('is given back by a stop of a session that is not running here', async () => {
    const c = cluster();
    await c.sessions.create({ name: 's' });
    c.held.add('s');
    assert.equal(await c.sessions.stop('s'), false);
    assert.equal(c.held.has('s'), false);
  });

  it('is given back by a queued adoption (an engine that connects to a network) whose read failed before it was queued', async () => {
    const c = cluster({ network: true });
    await c.sessions.create({ name: 's' });
    c.sessionsRepo.setShouldRun('s', true);
    c.down(true);
    await assert.rejects(c.sessions.adopt('s'), /unreachable/);
    assert.equal(c.held.has('s'), false);
  });

  it('is kept while another start of the same session is under way, which then runs it', async () => {
    const c = cluster();
    await c.sessions.create({ name: 's' });
    c.sessionsRepo.setShouldRun('s', true);
    // the first launch's read fails while the second's is on its way; the second runs the session
    c.failNextRead();
    const [first, second] = await Promise.allSettled([c.sessions.adopt('s'), c.sessions.start('s')]);
    assert.equal(first.status, 'rejected');
    assert.deepEqual(second, { status: 'fulfilled', value: true });
    assert.equal(c.held.has('s'), true, 'the running session keeps its lease');
  });
});
