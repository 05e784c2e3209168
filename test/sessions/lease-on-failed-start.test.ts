// In a cluster a session's lease is taken before it starts. A start or an adoption whose reads fail before the session's
// runtime exists (the database restarting) must give that lease back: a lease kept with nothing running is renewed
// forever, and no node runs the session again (the fresh-clone CI's database-outage test: 8 of 9 sessions CONNECTED).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionPlacement } from '../../src/cluster/cluster.js';
import type { Engine, EngineSession } from '../../src/engine/types.js';
import { testSessionManager } from '../helpers/session-manager.js';

function cluster() {
  const held = new Set<string>();
  const placement: SessionPlacement = {
    claim: async (session) => (held.add(session), true),
    release: async (session) => void held.delete(session),
    epochOf: (session) => (held.has(session) ? 1 : undefined),
  };
  let storeDown = false;
  const engine = {
    name: 'sandbox',
    connectsToNetwork: false,
    createSession: () => ({ connect: async () => {}, disconnect: async () => {} }) as unknown as EngineSession,
  } as unknown as Engine;
  const { manager: sessions, sessions: sessionsRepo, authState } = testSessionManager(engine, { placement });
  // the reads a launch makes before its runtime exists fail while the store is down
  const forSession = authState.forSession.bind(authState);
  authState.forSession = (name: string) => {
    const store = forSession(name);
    return { ...store, isEmpty: () => (storeDown ? Promise.reject(new Error('PostgreSQL is unreachable')) : store.isEmpty()) };
  };
  return { sessions, sessionsRepo, held, down: (value: boolean) => (storeDown = value) };
}

describe('session manager in a cluster: the lease of a launch that failed before it ran', () => {
  it('is given back by an adoption whose reads failed, and the session is adopted once the store answers', async () => {
    const c = cluster();
    await c.sessions.create({ name: 's' });
    c.sessionsRepo.setShouldRun('s', true);
    c.down(true);
    await c.sessions.adopt('s');
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
});
