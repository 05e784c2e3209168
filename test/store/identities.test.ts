// The phone-number ↔ LID pairs of a session (issue 19): stored as learnt, loaded by the next session object, bounded by
// evicting the least recently learnt or seen, a moved LID replacing its old pair, and deleted with the session.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../src/store/db.js';
import { createIdentitiesRepo, type IdentitiesRepo } from '../../src/store/identities.js';
import { IdentityPairs } from '../../src/engine/identities.js';

const pn = (n: number) => `1555000${String(n).padStart(4, '0')}@s.whatsapp.net`;
const lid = (n: number) => `9000000${String(n).padStart(4, '0')}@lid`;
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('identity pairs', () => {
  let dir: string;
  let db: Db;
  let repo: IdentitiesRepo;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'identities-'));
    db = openDatabase(join(dir, 'gateway.db'));
    const now = new Date().toISOString();
    for (const name of ['a', 'b']) await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run(name, 'sandbox', now, now);
    repo = createIdentitiesRepo(db);
  });

  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are written on the next turn in one batch and loaded by the next session object', async () => {
    const pairs = await IdentityPairs.open(repo.forSession('a'));
    pairs.set(pn(1), lid(1));
    pairs.set(pn(2), lid(2));
    assert.equal(await repo.count('a'), 0, 'not written synchronously');
    await nextTurn();
    assert.equal(await repo.count('a'), 2);
    const again = await IdentityPairs.open(repo.forSession('a'));
    assert.equal(again.pnOf(lid(2)), pn(2));
    assert.equal(again.lidOf(pn(1)), lid(1));
    assert.equal(await repo.count('b'), 0, 'per session');
  });

  it('keep at most `max`, evicting the least recently learnt or seen, in memory and in the store', async () => {
    const pairs = await IdentityPairs.open(repo.forSession('b'), undefined, 3);
    for (const n of [10, 11, 12]) pairs.set(pn(n), lid(n));
    await nextTurn();
    pairs.set(pn(10), lid(10)); // seen again: now the most recent
    pairs.set(pn(13), lid(13)); // evicts 11, the least recent
    await nextTurn();
    assert.equal(pairs.size, 3);
    assert.equal(pairs.lidOf(pn(11)), undefined);
    assert.equal(pairs.pnOf(lid(11)), undefined);
    assert.equal(pairs.lidOf(pn(10)), lid(10));
    assert.deepEqual((await repo.forSession('b').load()).map((p) => p.pn).sort(), [pn(10), pn(12), pn(13)]);
  });

  it('a LID that moves to another number replaces its old pair', async () => {
    const pairs = await IdentityPairs.open(repo.forSession('a'));
    pairs.set(pn(3), lid(1));
    await nextTurn();
    assert.equal(pairs.pnOf(lid(1)), pn(3));
    assert.equal(pairs.lidOf(pn(1)), undefined);
    const stored = await repo.forSession('a').load();
    assert.deepEqual(stored.filter((p) => p.lid === lid(1)), [{ pn: pn(3), lid: lid(1) }]);
    assert.equal(stored.some((p) => p.pn === pn(1)), false);
  });

  it('tell each change once, and keep when and from what a pair was learnt while it is only seen again', async () => {
    const changes: unknown[] = [];
    const pairs = await IdentityPairs.open(repo.forSession('b'));
    pairs.onChange = (change) => changes.push(change);
    pairs.set(pn(20), lid(20), 'group');
    pairs.set(pn(20), lid(20), 'message');
    await nextTurn();
    const first = (await repo.find('b', lid(20)))!;
    assert.equal(first.source, 'group');
    assert.ok(first.learntAt! > 0);
    assert.deepEqual(changes, [{ pn: pn(20), lid: lid(20), source: 'group' }], 'a pair seen again is no change');
    // seen again (a refresh write carries no source): its origin stays
    repo.forSession('b').save([{ pn: pn(20), lid: lid(20) }]);
    await nextTurn();
    const seen = (await repo.find('b', pn(20)))!;
    assert.deepEqual([seen.source, seen.learntAt], ['group', first.learntAt]);
    // the number gets another LID: a change, told with what it replaced, and recorded with its new origin
    pairs.set(pn(20), lid(21), 'network');
    await nextTurn();
    assert.deepEqual(changes[1], { pn: pn(20), lid: lid(21), previousLid: lid(20), source: 'network' });
    assert.equal((await repo.find('b', pn(20)))!.source, 'network');
    assert.equal(await repo.find('b', lid(20)), undefined);
    // a LID that moves to another number names the number it left
    pairs.set(pn(22), lid(21), 'message');
    assert.deepEqual(changes[2], { pn: pn(22), lid: lid(21), previousPn: pn(20), source: 'message' });
  });

  it('go with their session; a write after that is reported, not thrown', async () => {
    const errors: unknown[] = [];
    const pairs = await IdentityPairs.open(repo.forSession('a'), (err) => errors.push(err));
    await db.prepare('DELETE FROM sessions WHERE name = ?').run('a');
    assert.equal(await repo.count('a'), 0);
    pairs.set(pn(5), lid(5));
    await nextTurn();
    assert.equal(errors.length, 1);
    assert.equal(await repo.count('a'), 0);
    assert.equal(pairs.pnOf(lid(5)), pn(5), 'still known in memory');
  });
});
