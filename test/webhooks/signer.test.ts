// Tests for src/webhooks/signer.ts: HMAC-SHA256 vectors, header forms, timing-safe verification.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signBody, signatureHeader, verifySignature } from '../../src/webhooks/signer.js';

// RFC 4231 test case 2 (HMAC-SHA-256).
const RFC_KEY = 'Jefe';
const RFC_DATA = 'what do ya want for nothing?';
const RFC_DIGEST = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';

test('signBody matches the RFC 4231 test case 2 digest', () => {
  assert.equal(signBody(RFC_DATA, RFC_KEY), RFC_DIGEST);
  assert.equal(signBody(Buffer.from(RFC_DATA), RFC_KEY), RFC_DIGEST);
});

test('signBody matches an independently computed HMAC over the exact bytes', () => {
  const body = Buffer.from(JSON.stringify({ id: 'd1', event: 'message.received', payload: { text: 'héllo 👋' } }));
  const key = 'whsec_test_key';
  const expected = createHmac('sha256', key).update(body).digest('hex');
  assert.equal(signBody(body, key), expected);
  assert.equal(signBody(body.toString('utf8'), key), expected);
  assert.match(signBody(body, key), /^[0-9a-f]{64}$/);
  // a single changed byte changes the digest
  const tampered = Buffer.from(body);
  tampered[0] = 0x20;
  assert.notEqual(signBody(tampered, key), expected);
});

test('signBody of an empty body', () => {
  assert.equal(signBody('', 'k'), createHmac('sha256', 'k').update('').digest('hex'));
});

test('signatureHeader gives bare hex or sha256=<hex>', () => {
  assert.equal(signatureHeader(RFC_DIGEST, false), RFC_DIGEST);
  assert.equal(signatureHeader(RFC_DIGEST, true), `sha256=${RFC_DIGEST}`);
});

test('verifySignature accepts both header forms and upper-case hex', () => {
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, RFC_DIGEST), true);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, `sha256=${RFC_DIGEST}`), true);
  assert.equal(verifySignature(Buffer.from(RFC_DATA), RFC_KEY, RFC_DIGEST.toUpperCase()), true);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, `SHA256=${RFC_DIGEST}`), true);
});

test('verifySignature refuses a wrong key, a changed body and malformed headers', () => {
  assert.equal(verifySignature(RFC_DATA, 'jefe', RFC_DIGEST), false);
  assert.equal(verifySignature(`${RFC_DATA} `, RFC_KEY, RFC_DIGEST), false);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, RFC_DIGEST.slice(0, 63)), false);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, `${RFC_DIGEST}00`), false);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, ''), false);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, 'sha256='), false);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, `sha1=${RFC_DIGEST}`), false);
  assert.equal(verifySignature(RFC_DATA, RFC_KEY, 'z'.repeat(64)), false);
});
