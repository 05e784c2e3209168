// An event the session manager could not store makes the engine's next `hooks.committed` reject (the Baileys engine
// then drops the connection instead of confirming). That failure belongs to the socket it happened on: a reconnect, or a
// stop and a start, must not carry it over to the first confirmation of the next socket.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Engine, EngineSession, EngineSessionHooks } from '../../src/engine/types.js';
import { waitFor } from '../helpers/daemon.js';
import { testSessionManager } from '../helpers/session-manager.js';

/** an engine whose sessions only hand their hooks to the test; `hooks.at(-1)` is the latest runtime's */
function fakeEngine() {
  const hooks: EngineSessionHooks[] = [];
  let connects = 0;
  const engine = {
    name: 'sandbox',
    createSession(options: { hooks: EngineSessionHooks }) {
      hooks.push(options.hooks);
      return {
        connect: async () => void (connects += 1),
        disconnect: async () => {},
      } as unknown as EngineSession;
    },
  } as unknown as Engine;
  return { engine, hooks, connects: () => connects };
}

function manager(engine: Engine) {
  const { manager: sessions } = testSessionManager(engine);
  // the store fails for received messages
  sessions.addEventProcessor((_session, type) => {
    if (type === 'message.received') throw new Error('SQLITE_IOERR: disk I/O error');
  });
  return sessions;
}

const received = { messageId: 'M1', chatId: '15550000001@s.whatsapp.net' };

describe('session manager: store failures reported to hooks.committed', () => {
  it('rejects the confirmation of the socket the failure happened on', async () => {
    const fake = fakeEngine();
    const sessions = manager(fake.engine);
    await sessions.create({ name: 's', start: true });
    fake.hooks.at(-1)!.event('message.received', { ...received });
    await assert.rejects(fake.hooks.at(-1)!.committed!(), /disk I\/O error/);
  });

  it('rejects when the write made with the last events is refused (credentials fenced off in a cluster)', async () => {
    const fake = fakeEngine();
    const sessions = manager(fake.engine);
    await sessions.create({ name: 's', start: true });
    await assert.rejects(fake.hooks.at(-1)!.committed!(() => Promise.reject(new Error('stale lease of s'))), /stale lease of s/);
  });

  it('does not carry a failure over to the socket of a reconnect', async () => {
    const fake = fakeEngine();
    const sessions = manager(fake.engine);
    await sessions.create({ name: 's', start: true });
    const hooks = fake.hooks.at(-1)!;
    hooks.event('message.received', { ...received });
    hooks.connection({ kind: 'close', reason: 'AUTO_RECONNECT', detail: 'the connection dropped' });
    await waitFor(() => fake.connects() === 2, 5_000, 'the reconnect');
    await hooks.committed!();
  });

  it('does not carry a failure over to the session started again', async () => {
    const fake = fakeEngine();
    const sessions = manager(fake.engine);
    await sessions.create({ name: 's', start: true });
    fake.hooks.at(-1)!.event('message.received', { ...received });
    await sessions.stop('s');
    await sessions.start('s');
    assert.equal(fake.hooks.length, 2);
    await fake.hooks.at(-1)!.committed!();
  });
});
