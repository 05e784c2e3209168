// The secret box: AES-256-GCM values in the `v1:<keyId>:<base64url>` format, keys from an encryption key or HKDF of
// the master key, and every way a value can fail to open.
import assert from 'node:assert/strict';
import { hkdfSync, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  createSecretBox,
  dataKeyFrom,
  generateEncryptionKey,
  HKDF_INFO,
  HKDF_SALT,
  isSealed,
  parseEncryptionKey,
  sealedKeyId,
  secretBoxFor,
} from '../../src/auth/secret-box.js';

const MASTER = 'svc_master_secret_box_test_0123456789abcdef';

describe('secret box', () => {
  const box = secretBoxFor({ masterKey: MASTER });

  test('round-trips any string; each seal uses a fresh IV; the format names the key', () => {
    for (const value of ['', 'x', '{"noiseKey":{"private":"AAEC"}}', 'Zoë ✓ \u0000 \uffff', 'y'.repeat(100_000)]) {
      const sealed = box.seal(value, 'c');
      assert.ok(isSealed(sealed), sealed.slice(0, 40));
      assert.equal(sealedKeyId(sealed), box.keyId);
      assert.match(sealed, /^v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
      assert.equal(box.open(sealed, 'c'), value);
    }
    assert.notEqual(box.seal('same', 'c'), box.seal('same', 'c'));
  });

  test('the data key is HKDF-SHA256 of the master key with the documented salt and info', () => {
    const expected = Buffer.from(hkdfSync('sha256', Buffer.from(MASTER), 'session-gateway/secrets-at-rest/v1', 'data-key', 32));
    assert.equal(HKDF_SALT, 'session-gateway/secrets-at-rest/v1');
    assert.equal(HKDF_INFO, 'data-key');
    assert.ok(dataKeyFrom({ masterKey: MASTER }).equals(expected));
    assert.equal(secretBoxFor({ masterKey: MASTER }).keyId, box.keyId, 'the same master key gives the same key');
  });

  test('an encryption key wins over the master key, in hex, base64 or base64url', () => {
    const raw = randomBytes(32);
    const ids = [raw.toString('hex'), raw.toString('hex').toUpperCase(), raw.toString('base64'), raw.toString('base64url'), ` ${raw.toString('base64')}\n`].map(
      (text) => secretBoxFor({ masterKey: MASTER, encryptionKey: text }).keyId,
    );
    assert.equal(new Set(ids).size, 1);
    assert.notEqual(ids[0], box.keyId);
    assert.ok(parseEncryptionKey(generateEncryptionKey()).length === 32);
    for (const bad of ['short', raw.toString('hex').slice(2), randomBytes(31).toString('base64'), randomBytes(33).toString('hex'), 'g'.repeat(64)]) {
      assert.throws(() => parseEncryptionKey(bad), /must be 32 bytes/, bad);
    }
  });

  test('refuses values sealed under another key, for another context, altered or truncated', () => {
    const sealed = box.seal('secret', 'auth_state.value');
    const other = secretBoxFor({ masterKey: `${MASTER}-other` });
    assert.throws(() => other.open(sealed, 'auth_state.value'), /sealed under key [0-9a-f]{8}, not under this key/);
    assert.throws(() => box.open(sealed, 'settings.value'), /does not authenticate/);
    const body = Buffer.from(sealed.split(':')[2]!, 'base64url');
    body[14] ^= 1;
    assert.throws(() => box.open(`v1:${box.keyId}:${body.toString('base64url')}`, 'auth_state.value'), /does not authenticate/);
    assert.throws(() => box.open(`v1:${box.keyId}:AAAA`, 'auth_state.value'), /truncated/);
    assert.throws(() => box.open('{"plain":1}', 'auth_state.value'), /not sealed/);
    assert.throws(() => createSecretBox(randomBytes(16)), /32 bytes/);
  });

  test('plaintext an earlier version stored is never taken for a sealed value', () => {
    for (const value of ['{"a":1}', '"text"', '[{"name":"X","value":"y"}]', 'a'.repeat(64), 'v1:not-hex:abc', 'v1:deadbeef:', 'http://u:p@host:1']) {
      assert.equal(isSealed(value), false, value);
    }
  });

  test('a value sealed for a row (v2) opens only in that row; a v1 value opens with its column alone', () => {
    const sealed = box.seal('media-key', 'media.ref', '["f1"]');
    assert.match(sealed, /^v2:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    assert.ok(isSealed(sealed));
    assert.equal(sealedKeyId(sealed), box.keyId);
    assert.equal(box.open(sealed, 'media.ref', '["f1"]'), 'media-key');
    assert.throws(() => box.open(sealed, 'media.ref', '["f2"]'), /does not authenticate/);
    assert.throws(() => box.open(sealed, 'messages.raw', '["f1"]'), /does not authenticate/);
    assert.throws(() => box.open(sealed, 'media.ref'), /bound to a row/);
    // relabelled as a column-bound value it does not open either
    assert.throws(() => box.open(`v1:${sealed.slice(3)}`, 'media.ref', '["f1"]'), /does not authenticate/);
    const legacy = box.seal('old', 'media.ref');
    assert.equal(box.open(legacy, 'media.ref', '["any row"]'), 'old');
  });
});
