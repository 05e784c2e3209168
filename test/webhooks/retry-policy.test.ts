// Tests for src/webhooks/retry-policy.ts: spacing of each policy, defaults and caps.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_RETRIES,
  MAX_ATTEMPTS,
  MAX_DELAY_SECONDS,
  RETRY_POLICY_NAMES,
  retryDelaySeconds,
  type RetrySettings,
} from '../../src/webhooks/retry-policy.js';

const series = (s: RetrySettings, n: number): number[] => Array.from({ length: n }, (_, i) => retryDelaySeconds(s, i + 1));

test('defaults and caps', () => {
  assert.deepEqual({ ...DEFAULT_RETRIES }, { attempts: 3, delaySeconds: 5, policy: 'exponential' });
  assert.equal(MAX_ATTEMPTS, 20);
  assert.equal(MAX_DELAY_SECONDS, 3600);
  assert.deepEqual([...RETRY_POLICY_NAMES], ['constant', 'linear', 'exponential']);
  assert.ok(Object.isFrozen(DEFAULT_RETRIES));
});

test('constant keeps the delay: d, d, d', () => {
  assert.deepEqual(series({ attempts: 4, delaySeconds: 5, policy: 'constant' }, 4), [5, 5, 5, 5]);
});

test('linear adds the delay each retry: d, 2d, 3d', () => {
  assert.deepEqual(series({ attempts: 4, delaySeconds: 5, policy: 'linear' }, 4), [5, 10, 15, 20]);
});

test('exponential doubles: d, 2d, 4d (5, 10, 20 …)', () => {
  assert.deepEqual(series(DEFAULT_RETRIES, 3), [5, 10, 20]);
  assert.deepEqual(series({ attempts: 5, delaySeconds: 1, policy: 'exponential' }, 5), [1, 2, 4, 8, 16]);
});

test('every delay is capped at one hour', () => {
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 5, policy: 'exponential' }, 20), 3600);
  // 1 s doubling: 2048 at retry 12, 4096 → 3600 at retry 13
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 1, policy: 'exponential' }, 12), 2048);
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 1, policy: 'exponential' }, 13), 3600);
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 3600, policy: 'linear' }, 2), 3600);
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 2000, policy: 'linear' }, 2), 3600);
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 7200, policy: 'constant' }, 1), 3600);
  // huge retry numbers stay finite
  assert.equal(retryDelaySeconds({ attempts: 20, delaySeconds: 5, policy: 'exponential' }, 5000), 3600);
});

test('zero delay stays zero; out-of-range retry numbers are clamped to 1', () => {
  assert.deepEqual(series({ attempts: 3, delaySeconds: 0, policy: 'exponential' }, 3), [0, 0, 0]);
  assert.equal(retryDelaySeconds({ attempts: 3, delaySeconds: 0, policy: 'exponential' }, 100), 0);
  assert.equal(retryDelaySeconds({ attempts: 3, delaySeconds: 5, policy: 'linear' }, 0), 5);
  assert.equal(retryDelaySeconds({ attempts: 3, delaySeconds: 5, policy: 'exponential' }, -3), 5);
});
