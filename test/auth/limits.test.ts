// The client-token limits without HTTP: the sliding-window limiter with injected times (where a fixed window would
// let requests through), and the daily cap reserved in the store before a send and given back when it fails.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ClientRules } from '../../src/auth/client-rules.js';
import { SlidingWindowLimiter } from '../../src/auth/sliding-window.js';
import { createClientRulesRepo, type ClientRulesRepo } from '../../src/store/client-rules.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { GatewayError, RateLimitedError } from '../../src/errors.js';

describe('SlidingWindowLimiter', () => {
  it('is a sliding window: hits late in one fixed window still count at the start of the next', () => {
    const limiter = new SlidingWindowLimiter(1000);
    // three hits late in [0, 1000)
    for (const t of [900, 950, 990]) assert.deepEqual(limiter.hit('k', 3, t), { allowed: true }, `hit at ${t}`);
    // a fixed window would reset at 1000 and allow; the sliding window still holds all three
    const atBoundary = limiter.hit('k', 3, 1000);
    assert.equal(atBoundary.allowed, false);
    assert.ok(!atBoundary.allowed && Math.abs(atBoundary.retryAfterSeconds - 0.9) < 1e-9, JSON.stringify(atBoundary));
    // one millisecond before the oldest hit (900) leaves the window: still refused, 1 ms to wait
    const justBefore = limiter.hit('k', 3, 1899);
    assert.equal(justBefore.allowed, false);
    assert.ok(!justBefore.allowed && Math.abs(justBefore.retryAfterSeconds - 0.001) < 1e-9, JSON.stringify(justBefore));
    // at 1900 the hit of 900 is exactly one window old and slides out: one slot frees
    assert.deepEqual(limiter.hit('k', 3, 1900), { allowed: true });
    // only one: the hits of 950 and 990 are still in the window
    const next = limiter.hit('k', 3, 1901);
    assert.equal(next.allowed, false);
    assert.ok(!next.allowed && Math.abs(next.retryAfterSeconds - 0.049) < 1e-9, JSON.stringify(next));
    assert.deepEqual(limiter.hit('k', 3, 1950), { allowed: true });
    assert.equal(limiter.hit('k', 3, 1950).allowed, false);
  });

  it('refused hits are not recorded, and keys are independent', () => {
    const limiter = new SlidingWindowLimiter(1000);
    assert.equal(limiter.hit('a', 1, 0).allowed, true);
    for (let t = 1; t < 1000; t += 100) assert.equal(limiter.hit('a', 1, t).allowed, false, `refused at ${t}`);
    // had the refusals counted, 'a' would still be full at 1000
    assert.equal(limiter.hit('a', 1, 1000).allowed, true);
    assert.equal(limiter.hit('b', 1, 500).allowed, true, 'another key has its own window');
  });

  it('a limit lowered below the hits already in the window refuses until enough have slid out', () => {
    const limiter = new SlidingWindowLimiter(1000);
    for (const t of [0, 100, 200, 300]) assert.equal(limiter.hit('k', 10, t).allowed, true);
    assert.equal(limiter.hit('k', 2, 400).allowed, false);
    assert.equal(limiter.hit('k', 2, 1100).allowed, false, 'hits of 200 and 300 still in the window');
    assert.equal(limiter.hit('k', 2, 1200).allowed, true, 'the hit of 200 slid out: one left in the window, under the limit of 2');
    assert.equal(limiter.hit('k', 2, 1201).allowed, false);
  });

  it('sweep forgets only keys whose window is empty', () => {
    const limiter = new SlidingWindowLimiter(1000);
    limiter.hit('old', 1, 0);
    limiter.hit('fresh', 1, 500);
    limiter.sweep(1200);
    // 'fresh' still remembers its hit of 500; 'old' starts over (and would anyway: its hit slid out)
    assert.equal(limiter.hit('fresh', 1, 1200).allowed, false);
    assert.equal(limiter.hit('old', 1, 1200).allowed, true);
  });

  it('with a lowered limit, Retry-After waits for every hit that must slide out, not just the oldest', () => {
    const limiter = new SlidingWindowLimiter(1000);
    for (const t of [0, 100, 200, 300]) limiter.hit('k', 10, t);
    const verdict = limiter.hit('k', 2, 400);
    // 0, 100 and 200 must all leave before a third hit fits under 2: at 1200
    assert.ok(!verdict.allowed && Math.abs(verdict.retryAfterSeconds - 0.8) < 1e-9, JSON.stringify(verdict));
  });

  it('counts exactly over many windows with a large limit (expired hits are compacted away)', () => {
    const limiter = new SlidingWindowLimiter(1000);
    let allowed = 0;
    // 4 hits per ms for 5 s against 1000 per second: exactly 1000 allowed in each 1-second window
    for (let i = 0; i < 20_000; i++) if (limiter.hit('k', 1000, i / 4).allowed) allowed += 1;
    assert.equal(allowed, 5000);
  });
});

describe('daily cap in the store', () => {
  let dir: string;
  let db: Db;
  let repo: ClientRulesRepo;
  let rules: ClientRules;
  const principal = (ephemeralId: string) => ({ kind: 'client' as const, session: 'alpha', ephemeralId, tokenId: 't' });
  const send = { method: 'POST', routePath: '/api/messages/send', session: 'alpha', chatId: '+15550000001', origin: undefined };
  const today = () => new Date().toISOString().slice(0, 10);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'client-limits-'));
    db = openDatabase(join(dir, 'gateway.db'));
    const now = new Date().toISOString();
    await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('alpha', 'sandbox', now, now);
    repo = createClientRulesRepo(db);
    rules = new ClientRules(repo, () => true);
  });

  after(async () => {
    rules?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reserveDailySend takes a slot in one step and refuses at the cap; releaseDailySend gives it back', async () => {
    const day = today();
    assert.equal(await repo.reserveDailySend('alpha', 'e1', day, 2), true);
    assert.equal(await repo.reserveDailySend('alpha', 'e1', day, 2), true);
    assert.equal(await repo.reserveDailySend('alpha', 'e1', day, 2), false);
    assert.equal(await repo.dailySends('alpha', 'e1', day), 2, 'a refused reservation counts nothing');
    await repo.releaseDailySend('alpha', 'e1', day);
    assert.equal(await repo.dailySends('alpha', 'e1', day), 1);
    assert.equal(await repo.reserveDailySend('alpha', 'e1', day, 2), true);
    assert.equal(await repo.reserveDailySend('alpha', 'e1', day, 1), false, 'a lowered cap refuses');
    assert.equal(await repo.reserveDailySend('alpha', 'e2', day, 2), true, 'per ephemeral id');
  });

  it('enforce reserves before the handler: the cap holds without any success callback, and release frees the slot once', async () => {
    await rules.put('alpha', { recipientMode: 'any', allowedActions: 'send_message,send_reaction,send_typing', dailySendCap: 2 });
    // started together, as parallel requests would be: each reservation is one statement, so the cap still holds
    const [first, second, third] = await Promise.allSettled([
      rules.enforce(principal('e3'), send),
      rules.enforce(principal('e3'), send),
      rules.enforce(principal('e3'), send),
    ]);
    assert.ok(first.status === 'fulfilled' && first.value && second.status === 'fulfilled' && second.value, 'capped sends get a grant');
    // both "in flight", nothing finished: a third is already refused
    assert.ok(third.status === 'rejected');
    const refusal: unknown = third.reason;
    assert.ok(refusal instanceof RateLimitedError && refusal.code === 'DAILY_CAP_REACHED' && refusal.retryAfterSeconds >= 1);
    assert.equal(await rules.enforce(principal('e3'), { ...send, routePath: '/api/sessions/:session/messages/typing' }), undefined, 'typing is not capped');
    first.value.release();
    first.value.release();
    assert.equal(await repo.dailySends('alpha', 'e3', today()), 1, 'a failed send gives its slot back, once');
    assert.ok(await rules.enforce(principal('e3'), send));
    await assert.rejects(() => rules.enforce(principal('e3'), send), (err: unknown) => err instanceof GatewayError && err.code === 'DAILY_CAP_REACHED');
  });

  it('the session incarnation changes when a session is deleted and created again under its name', async () => {
    const before = await repo.tokenEpoch('alpha');
    assert.ok(before);
    await db.prepare('DELETE FROM sessions WHERE name = ?').run('alpha');
    assert.equal(await repo.tokenEpoch('alpha'), undefined);
    const later = new Date(Date.parse(new Date().toISOString()) + 5).toISOString();
    await db.prepare('INSERT INTO sessions (name, engine, created_at, updated_at) VALUES (?, ?, ?, ?)').run('alpha', 'sandbox', later, later);
    const after = await repo.tokenEpoch('alpha');
    assert.equal(after?.epoch, before.epoch, 'the epoch starts over');
    assert.notEqual(after?.incarnation, before.incarnation, 'the incarnation does not');
  });
});
