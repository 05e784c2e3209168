// The event log's numbering and its readers (issue 30): a number per session without gaps, an event told to readers only
// once its tick has committed (never when the tick was lost), and a reader that resumes reads the past, then the live
// events, with none missed or twice even while events commit during the read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GatewayEvent } from '../../src/events/catalogue.js';
import { formatCursor, parseCursor } from '../../src/events/cursor.js';
import { followLog } from '../../src/events/follow.js';
import { EventLog } from '../../src/events/log.js';
import { createTickTransaction, openDatabase } from '../../src/store/db.js';
import { createEventLogRepo } from '../../src/store/event-log.js';

const event = (session: string, seq: number, type: GatewayEvent['event'] = 'message.received'): GatewayEvent => ({
  id: `${session}-${seq}`,
  event: type,
  session,
  seq,
  timestamp: new Date(1_800_000_000_000 + seq).toISOString(),
  payload: { n: seq },
});

/** a tick whose commit the test settles */
function heldTick() {
  let number = 1;
  let settle: { done(): void; fail(err: Error): void } | undefined;
  let pending: Promise<void> | undefined;
  return {
    mark: () => number,
    committed() {
      pending ??= new Promise<void>((done, fail) => (settle = { done, fail }));
      return pending;
    },
    commit() {
      settle?.done();
      pending = undefined;
      number += 1;
    },
    lose() {
      settle?.fail(new Error('lost'));
      pending = undefined;
      number += 1;
    },
  };
}

const turn = () => new Promise((done) => setImmediate(done));

test('numbers go 1, 2, 3 … per session, go on from the store after a restart, and a session taken over reads them again', async () => {
  const db = openDatabase(':memory:');
  const tick = createTickTransaction(db, () => {});
  const repo = createEventLogRepo(db);
  const log = new EventLog(repo, tick);
  await log.open();
  for (const session of ['a', 'a', 'b', 'a']) {
    tick.join();
    log.persist({ ...event(session, log.next(session)) });
  }
  tick.flush();
  assert.deepEqual([log.lastNumber('a'), log.lastNumber('b')], [3, 1]);
  const again = new EventLog(repo, tick);
  await again.open();
  assert.equal(again.next('a'), 4, 'the next number after a restart follows the stored ones');
  // another node numbered b's events meanwhile
  tick.join();
  await repo.append({ session: 'b', seq: 2, event: 'message.received', at: Date.now(), envelope: '{}' });
  tick.flush();
  await again.resume('b');
  assert.equal(again.next('b'), 3);
  assert.deepEqual(await repo.page('a', 1, 3, [], 10).then((rows) => rows.map((row) => JSON.parse(row).seq)), [2, 3]);
  await db.close();
});

test("readers hear an event once its tick has committed, in order, and never one of a lost tick", async () => {
  const db = openDatabase(':memory:');
  const tick = heldTick();
  const log = new EventLog(createEventLogRepo(db), tick);
  const heard: number[] = [];
  log.subscribeCommitted((e) => heard.push(e.seq));
  log.persist(event('a', 1));
  log.persist(event('a', 2));
  await turn();
  assert.deepEqual(heard, [], 'nothing before the commit');
  tick.commit();
  await turn();
  assert.deepEqual(heard, [1, 2]);
  log.persist(event('a', 3));
  tick.lose();
  log.persist(event('a', 4));
  tick.commit();
  await turn();
  assert.deepEqual(heard, [1, 2, 4], "the lost tick's event is never told");
  assert.equal(log.toldNumbers().get('a'), 4);
  // a row written but not yet committed (visible on the store's own connection) is not read back either
  log.persist(event('a', 5));
  assert.equal(Math.max(...(await log.page('a', 0, [], 10)).map((row) => JSON.parse(row).seq)), 4, 'up to the newest told: 5 is not committed');
  tick.commit();
  await turn();
  assert.deepEqual((await log.page('a', 4, [], 10)).map((row) => JSON.parse(row).seq), [5]);
  await db.close();
});

test('a resumed reader gets the past from the log, then live events, none missed or twice while events commit during the read', async () => {
  const stored: GatewayEvent[] = [];
  for (let seq = 1; seq <= 2500; seq++) stored.push(event('a', seq, seq % 10 === 0 ? 'session.status' : 'message.received'));
  let listener: ((e: GatewayEvent) => void) | undefined;
  const told = new Map([['a', 2500]]);
  const log = {
    toldNumbers: () => told,
    subscribeCommitted(l: (e: GatewayEvent) => void) {
      listener = l;
      return () => (listener = undefined);
    },
    async page(session: string, after: number, types: readonly string[], limit: number) {
      // while the past is read, more events commit (and are told)
      const next = stored.length + 1;
      if (next <= 2510) {
        const live = event('a', next);
        stored.push(live);
        told.set('a', next);
        listener?.(live);
      }
      await turn();
      return stored
        .filter((e) => e.session === session && e.seq > after && (types.length === 0 || types.includes(e.event)))
        .slice(0, limit)
        .map((e) => JSON.stringify(e));
    },
  };
  const got: number[] = [];
  let cursor = '';
  const following = followLog({
    log,
    resumeFrom: parseCursor('100', 'a') as Map<string, number>,
    inScope: (s) => s === 'a',
    types: new Set(['message.received']),
    deliver(e, positions) {
      got.push(e.seq);
      cursor = formatCursor(positions, 'a');
    },
    isOpen: () => true,
  });
  await following.done;
  // the next event, live: sent at once
  const next = event('a', stored.length + 1);
  stored.push(next);
  told.set('a', next.seq);
  listener?.(next);
  const expected = stored.filter((e) => e.seq > 100 && e.event === 'message.received').map((e) => e.seq);
  assert.deepEqual(got, expected);
  assert.equal(cursor, String(next.seq));
  following.stop();
  assert.equal(listener, undefined);
});

test('a live event past the next one (a relay that dropped events) sends the reader to the log for those between', async () => {
  const stored = [1, 2, 3, 4, 5, 6].map((seq) => event('a', seq));
  let listener: ((e: GatewayEvent) => void) | undefined;
  const told = new Map([['a', 2]]);
  let reads = 0;
  const log = {
    toldNumbers: () => told,
    subscribeCommitted(l: (e: GatewayEvent) => void) {
      listener = l;
      return () => (listener = undefined);
    },
    async page(session: string, after: number, _types: readonly string[], limit: number) {
      reads += 1;
      return stored.filter((e) => e.session === session && e.seq > after && e.seq <= told.get(session)!).slice(0, limit).map((e) => JSON.stringify(e));
    },
  };
  const got: number[] = [];
  const following = followLog({ log, resumeFrom: undefined, inScope: () => true, types: new Set(), deliver: (e) => void got.push(e.seq), isOpen: () => true });
  await following.done;
  listener?.(stored[2]!);
  assert.deepEqual([got, reads], [[3], 0], 'the next event: sent at once, no read');
  // 4 and 5 were relayed while the relay was down; 6 arrives live
  told.set('a', 6);
  listener?.(stored[5]!);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(got, [3, 4, 5, 6]);
  assert.equal(reads, 1);
  listener?.(event('a', 7));
  assert.deepEqual(got, [3, 4, 5, 6, 7], 'live again');
  following.stop();
});

test('cursors: a number for one session, session:number pairs for several; bad ones are named', () => {
  assert.deepEqual(parseCursor('12', 'a'), new Map([['a', 12]]));
  assert.match(parseCursor('12', undefined) as string, /session/);
  assert.deepEqual(parseCursor('a:3,b.x:4', undefined), new Map([['a', 3], ['b.x', 4]]));
  assert.deepEqual(parseCursor('a:3,b:4', 'b'), new Map([['b', 4]]));
  for (const bad of ['', 'a:', ':3', 'a:-1', 'a:1;b:2', 'a b:1', 'a:1e3']) assert.equal(typeof parseCursor(bad, undefined), 'string', bad);
  assert.equal(formatCursor(new Map([['a', 3], ['b', 0], ['c', 9]]), undefined), 'a:3,c:9');
});
