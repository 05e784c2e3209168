// What the one error writer makes of errors the store throws: a retryable answer for what a retry completes, never a 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toGatewayError } from '../../src/http/middleware/errors.js';
import { errorStatus } from '../../src/http/error-status.js';
import { PostgresError } from '../../src/store/pg-errors.js';
import { StaleLeaseError } from '../../src/store/leases.js';
import { TickAbortedError } from '../../src/store/sql.js';

const answer = (err: unknown) => {
  const error = toGatewayError(err);
  return [error.code, errorStatus[error.code]];
};

test('a deadlock or serialization victim, a lock or statement timeout, a lost connection: 503 STORE_UNAVAILABLE', () => {
  for (const code of ['40P01', '40001', '55P03', '57014', '08003', '57P01', 'ECONNRESET']) {
    assert.deepEqual(answer(new PostgresError({ message: 'x', code })), ['STORE_UNAVAILABLE', 503], code);
  }
});

test('writes rolled back with a store transaction that failed in their tick: 503 STORE_UNAVAILABLE, a retry writes them', () => {
  assert.deepEqual(answer(new TickAbortedError(new Error('disk I/O error'))), ['STORE_UNAVAILABLE', 503]);
});

test("a write fenced off by a lease that lapsed or moved: 409 SESSION_ON_OTHER_NODE, the owner's to answer", () => {
  const error = toGatewayError(new StaleLeaseError('a', 3));
  assert.deepEqual([error.code, errorStatus[error.code]], ['SESSION_ON_OTHER_NODE', 409]);
  assert.match(error.message, /session a: .*retry/);
});

test('a value the store cannot hold is the request\'s fault; anything else stays a 500', () => {
  assert.deepEqual(answer(new PostgresError({ message: 'out of range', code: '22003' })), ['VALIDATION_FAILED', 400]);
  assert.deepEqual(answer(new PostgresError({ message: 'duplicate key', code: '23505' })), ['INTERNAL', 500]);
  assert.deepEqual(answer(new Error('bug')), ['INTERNAL', 500]);
});
