// The send governor's rules with an injected clock and random source: the pace (burst, refill), the gap per chat, the
// jitter, the first-contact cap with its warm-up ladder, what loosens a policy, and the safeMode alias.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { DAY_MS, FirstContacts, firstContactCap, loosenedSettings, Pacer, policyOf } from '../../src/messages/governor.js';
import { secondsUntilUtcMidnight } from '../../src/timestamp.js';

const settings = { ...DEFAULT_CONFIG.governor, perMinute: 60, burst: 2, recipientGapSeconds: 5, jitterPercent: 50 };
const policy = policyOf(settings, {});

function clock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('pace', () => {
  test('a burst goes at once; the next send waits for the bucket to refill at perMinute', () => {
    const time = clock();
    const pacer = new Pacer(time.now, () => 0);
    for (const chat of ['a', 'b']) {
      assert.equal(pacer.waitMs('s', chat, policy), 0);
      pacer.take('s', chat, policy);
    }
    assert.equal(pacer.waitMs('s', 'c', policy), 1000);
    time.advance(400);
    assert.equal(pacer.waitMs('s', 'c', policy), 600);
    time.advance(600);
    assert.equal(pacer.waitMs('s', 'c', policy), 0);
    // sessions have buckets of their own
    assert.equal(pacer.waitMs('other', 'c', policy), 0);
  });

  test('two sends to one chat are recipientGapSeconds apart, whatever the bucket holds', () => {
    const time = clock();
    const pacer = new Pacer(time.now, () => 0);
    pacer.take('s', 'a', policy);
    assert.equal(pacer.waitMs('s', 'a', policy), 5000);
    assert.equal(pacer.waitMs('s', 'b', policy), 0);
    time.advance(4999);
    assert.equal(pacer.waitMs('s', 'a', policy), 1);
    time.advance(1);
    assert.equal(pacer.waitMs('s', 'a', policy), 0);
  });

  test('jitter is 0..jitterPercent % of one interval, from the random source', () => {
    assert.equal(new Pacer(Date.now, () => 0).jitterMs(policy), 0);
    assert.equal(new Pacer(Date.now, () => 0.5).jitterMs(policy), 250);
    assert.equal(new Pacer(Date.now, () => 0.999).jitterMs(policyOf({ ...settings, jitterPercent: 0 }, {})), 0);
  });
});

describe('first-contact cap', () => {
  const paired = Date.UTC(2026, 0, 10, 23, 0);
  const ladder = policyOf({ ...settings, warmup: [5, 10], firstContactsPerDay: 40 }, {});

  test('the warm-up ladder counts UTC days since pairing, then the mature cap applies', () => {
    assert.deepEqual(firstContactCap(ladder, paired, paired + 3_600_000 - 1), { limit: 5, name: 'warmup', setting: '/governor/warmup/0' });
    assert.deepEqual(firstContactCap(ladder, paired, paired + 3_600_000), { limit: 10, name: 'warmup', setting: '/governor/warmup/1' });
    assert.deepEqual(firstContactCap(ladder, paired, paired + 2 * DAY_MS), { limit: 40, name: 'firstContactsPerDay', setting: '/governor/firstContactsPerDay' });
    // paired before the gateway recorded it (0): mature
    assert.equal(firstContactCap(ladder, 0, paired).name, 'firstContactsPerDay');
  });

  test('Retry-After runs to the next UTC midnight', () => {
    assert.equal(secondsUntilUtcMidnight(Date.UTC(2026, 0, 10, 23, 59, 30)), 30);
  });

  test("today's first contacts are loaded once a day from the store, then kept in memory", async () => {
    const time = clock(Date.UTC(2026, 0, 10, 12));
    const loads: number[] = [];
    const contacts = new FirstContacts(async (_session, since) => {
      loads.push(since);
      return ['x@s.whatsapp.net'];
    }, time.now);
    const [first, again] = await Promise.all([contacts.today('s'), contacts.today('s')]);
    assert.equal(first, again);
    first.add('y@s.whatsapp.net');
    assert.equal((await contacts.today('s')).size, 2);
    time.advance(DAY_MS);
    assert.equal((await contacts.today('s')).size, 1);
    assert.deepEqual(loads, [Date.UTC(2026, 0, 10), Date.UTC(2026, 0, 11)]);
  });
});

describe('policy', () => {
  test('config.governor overrides the gateway; safeMode is the typing switch unless governor.typing says otherwise', () => {
    assert.equal(policyOf(settings, { safeMode: true }).typing, true);
    assert.equal(policyOf(settings, { safeMode: true, governor: { typing: false } }).typing, false);
    assert.equal(policyOf(settings, { governor: { perMinute: 3 } }).perMinute, 3);
    assert.equal(policyOf(settings, {}).exempt, false);
    assert.equal(policyOf(settings, { governor: { exempt: true } }).exempt, true);
    assert.equal(policyOf({ ...settings, enabled: false }, {}).exempt, true);
  });

  test('tighter settings are anyone’s; looser ones than the session has now, and exempt, are named (master key only)', () => {
    const gateway = DEFAULT_CONFIG.governor;
    assert.deepEqual(loosenedSettings(gateway, {}, { governor: { perMinute: 1, burst: 1, recipientGapSeconds: 60, firstContactsPerDay: 1, warmup: [1, 1, 1], typing: true } }), []);
    assert.deepEqual(loosenedSettings(gateway, {}, { governor: { exempt: true, perMinute: 1000, burst: 500, jitterPercent: 0, recipientGapSeconds: 0, firstContactsPerDay: 1000 } }), [
      'exempt',
      'perMinute',
      'burst',
      'jitterPercent',
      'recipientGapSeconds',
      'firstContactsPerDay',
    ]);
    // a shorter ladder lets the mature cap in earlier: looser
    assert.deepEqual(loosenedSettings(gateway, {}, { governor: { warmup: [] } }), ['warmup']);
    assert.deepEqual(loosenedSettings(gateway, {}, {}), []);
    // against the session's current settings, not the gateway's: the operator's tightening is not undone
    const tightened = { governor: { perMinute: 2, typing: true } };
    assert.deepEqual(loosenedSettings(gateway, tightened, { governor: { perMinute: 12, typing: true } }), ['perMinute']);
    assert.deepEqual(loosenedSettings(gateway, tightened, { governor: { perMinute: 1, typing: true } }), []);
    assert.deepEqual(loosenedSettings(gateway, tightened, {}).sort(), ['perMinute', 'typing'].sort(), 'removing the override loosens too');
    // typing turned off (by governor.typing or safeMode) loosens
    assert.deepEqual(loosenedSettings({ ...gateway, typing: false }, { safeMode: true }, {}), ['typing']);
    assert.deepEqual(loosenedSettings(gateway, { governor: { typing: true } }, { governor: { typing: false } }), ['typing']);
  });
});
