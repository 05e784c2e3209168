// hooks.committed writes what depends on a session's events (the Signal keys a received message's decryption advanced)
// only where it cannot outlive them: when a tick holding those events was lost, it rejects and writes nothing, so the
// engine drops the connection and WhatsApp delivers the message again to keys that can still decrypt it. On the
// manager with a real tick on SQLite; the PostgreSQL side is test/store/postgres-tick.test.ts and the crash test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTickTransaction } from '../../src/store/db.js';
import type { TickTransaction } from '../../src/store/sql.js';
import { hookedEngine, testSessionManager } from '../helpers/session-manager.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function setUp() {
  const { engine, hooks } = hookedEngine();
  let tick!: TickTransaction;
  const { manager, db } = testSessionManager(engine, (store) => ({ ticks: (tick = createTickTransaction(store, () => {})) }));
  db.sqlite.exec('CREATE TABLE written (what TEXT PRIMARY KEY)');
  const write = db.prepare('INSERT INTO written (what) VALUES (?)');
  const written = async (what: string) => (await db.prepare('SELECT what FROM written WHERE what = ?').pluck().get(what)) !== undefined;
  /** events with `slow` wait for `letGo` before they are stored; the tick that stores one with `lost` is rolled back */
  let letGo: () => void = () => {};
  manager.addEventProcessor((_session, _type, payload) => {
    tick.join();
    if (payload.slow) return new Promise<void>((resolve) => (letGo = resolve)).then(() => write.stage(String(payload.id)));
    write.stage(String(payload.id));
    if (payload.lost) tick.abort(new Error(String(payload.lost)));
  });
  await manager.create({ name: 's', start: true });
  await tick.committed();
  return { hooks, tick, write, written, letGo: () => letGo() };
}

test("a tick holding the session's events was lost: hooks.committed rejects and writes nothing", async () => {
  const { hooks, tick, write, written } = await setUp();
  hooks().event('message.received', { id: 'event' });
  tick.abort(new Error('the disk is gone'));
  await nextTurn(); // the tick ends, rolled back
  assert.equal(await written('event'), false);
  let ran = false;
  await assert.rejects(hooks().committed!(() => ((ran = true), write.stage('key'))), /the disk is gone/);
  assert.equal(ran, false, 'what depends on the lost events was not even staged');
  assert.equal(await written('key'), false);
  // the check is done with: the next event's confirmation goes through
  hooks().event('message.received', { id: 'next' });
  await hooks().committed!(() => write.stage('next-key'));
  assert.deepEqual([await written('next'), await written('next-key')], [true, true]);
});

test('an event reported while an earlier confirmation waits keeps its own check', async () => {
  const { hooks, tick, write, written, letGo } = await setUp();
  hooks().event('message.received', { id: 'first', slow: true });
  const first = hooks().committed!();
  first.catch(() => {});
  // reported while `first` waits for the slow event: it is stored after it, in a tick that is then lost
  hooks().event('message.received', { id: 'second', lost: 'lost with the second event' });
  letGo();
  await first.catch(() => {});
  await nextTurn();
  assert.equal(await written('second'), false);
  let ran = false;
  await assert.rejects(hooks().committed!(() => ((ran = true), write.stage('second-key'))), /lost with the second event/);
  assert.equal(ran, false);
  assert.equal(await written('second-key'), false);
});
