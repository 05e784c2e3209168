// A SessionManager on an in-memory SQLite store with one engine, for tests of the manager itself (no daemon, no HTTP).
import { createSecretBox } from '../../src/auth/secret-box.js';
import type { Engine, EngineSession, EngineSessionHooks } from '../../src/engine/types.js';
import { EventBus } from '../../src/events/bus.js';
import { createLogger } from '../../src/logger.js';
import { SessionManager } from '../../src/sessions/manager.js';
import { createAuthStateRepo } from '../../src/store/auth-state.js';
import { openDatabase, type SqliteDb } from '../../src/store/db.js';
import { createSessionsRepo } from '../../src/store/sessions.js';

type Deps = ConstructorParameters<typeof SessionManager>[0];

/**
 * `engine` serves the sandbox engine's name; `overrides` replace the defaults (a placement, a failing auth state, …), or
 * are made from the store (its tick transaction).
 */
export function testSessionManager(engine: Engine, overrides: Partial<Deps> | ((db: SqliteDb) => Partial<Deps>) = {}) {
  const db = openDatabase(':memory:');
  const box = createSecretBox(Buffer.alloc(32, 7));
  const repos = { sessions: createSessionsRepo(db, box), authState: createAuthStateRepo(db, box) };
  const manager = new SessionManager({
    ...repos,
    engines: { has: (name) => name === 'sandbox', load: async () => engine, close: async () => {} },
    bus: new EventBus(),
    logger: createLogger('silent'),
    settings: { reconnectBaseMs: 1, reconnectMaxMs: 1, reconnectMaxAttempts: 5 },
    defaultEngine: 'sandbox',
    urlPolicy: { allowPrivateTargets: false },
    ...(typeof overrides === 'function' ? overrides(db) : overrides),
  });
  return { manager, db, ...repos };
}

/** An engine whose sessions do nothing but hand their hooks over: a test reports what the engine would. */
export function hookedEngine(): { engine: Engine; hooks: () => EngineSessionHooks } {
  let hooks: EngineSessionHooks | undefined;
  const engine = {
    name: 'sandbox',
    createSession(options: { hooks: EngineSessionHooks }) {
      hooks = options.hooks;
      return { connect: async () => {}, disconnect: async () => {} } as unknown as EngineSession;
    },
  } as unknown as Engine;
  return { engine, hooks: () => hooks! };
}
