// isoTimestamp formats the second once and the milliseconds on every call: it must read exactly as toISOString.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoTimestamp } from '../../src/timestamp.js';

test('isoTimestamp reads exactly as Date#toISOString', () => {
  const now = Date.now();
  const samples = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 951_782_400_000, 1_700_000_000_000, 4_102_444_799_999, now];
  // every millisecond of a few seconds, out of order (the cached second changes back and forth)
  for (let ms = now - 2000; ms < now + 2000; ms += 7) samples.push(ms, now - (ms - now));
  for (const ms of samples) assert.equal(isoTimestamp(ms), new Date(ms).toISOString(), `at ${ms}`);
  const before = Date.now();
  const current = Date.parse(isoTimestamp());
  assert.ok(current >= before && current <= Date.now(), 'the default is now');
});
