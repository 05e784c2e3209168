// Seals and opens secrets stored at rest with AES-256-GCM: `v1:<keyId>:<base64url(iv ‖ ciphertext ‖ tag)>`, the
// additional data naming the value's column; `v2:` the same with the additional data naming its column and its row, so
// that a value copied into another row does not open there.
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';

export const SEALED_PREFIX = 'v1:';
/** the prefix of a value bound to its row */
export const ROW_SEALED_PREFIX = 'v2:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** HKDF-SHA256 parameters for a data key derived from the master key; fixed, so the same master key gives the same data key. */
export const HKDF_SALT = 'session-gateway/secrets-at-rest/v1';
export const HKDF_INFO = 'data-key';
const SEALED_SHAPE = /^v([12]):([0-9a-f]{8}):([A-Za-z0-9_-]+)$/;

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export interface SecretBox {
  /** 8 hex characters naming the data key (an HMAC of a fixed label, not of any secret value) */
  readonly keyId: string;
  /**
   * `context` is bound as additional data: a value sealed for one column does not open in another; with `row` (the
   * row's key, as text) it is bound to that row as well (a `v2:` value)
   */
  seal(plaintext: string, context: string, row?: string): string;
  /**
   * The plaintext; throws SecretBoxError when the value was sealed under another key, for another place, or altered.
   * A `v2:` value opens only with the `row` it was sealed for; a `v1:` value (sealed before values were bound to their
   * row) opens with its column's context alone.
   */
  open(sealed: string, context: string, row?: string): string;
}

/** true when the value has the sealed format (plaintext written before encryption never does: it is JSON or a user's key) */
export const isSealed = (value: string): boolean => SEALED_SHAPE.test(value);

/** the key id a sealed value names, or undefined for plaintext */
export const sealedKeyId = (value: string): string | undefined => SEALED_SHAPE.exec(value)?.[2];

/** The additional data of a value: its column's context, and for a row-bound value the row too. */
const additionalData = (context: string, row: string | undefined): Buffer =>
  Buffer.from(row === undefined ? context : `${context}\u0000${row}`, 'utf8');

export function createSecretBox(dataKey: Buffer): SecretBox {
  if (dataKey.length !== KEY_BYTES) throw new SecretBoxError(`the data key must be ${KEY_BYTES} bytes, got ${dataKey.length}`);
  // a KeyObject is imported once: a cipher made from it skips copying and checking the raw key on every value
  const key = createSecretKey(Buffer.from(dataKey));
  const keyId = createHmac('sha256', key).update('session-gateway key id').digest('hex').slice(0, 8);
  const columnHeader = `${SEALED_PREFIX}${keyId}:`;
  const rowHeader = `${ROW_SEALED_PREFIX}${keyId}:`;
  return {
    keyId,
    seal(plaintext, context, row) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(additionalData(context, row));
      const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return (row === undefined ? columnHeader : rowHeader) + body.toString('base64url');
    },
    open(sealed, context, row) {
      const match = SEALED_SHAPE.exec(sealed);
      if (!match) throw new SecretBoxError('the value is not sealed');
      if (match[2] !== keyId) throw new SecretBoxError(`the value was sealed under key ${match[2]}, not under this key (${keyId})`);
      const rowBound = match[1] === '2';
      if (rowBound && row === undefined) throw new SecretBoxError('the value is bound to a row, and no row was named');
      const body = Buffer.from(match[3]!, 'base64url');
      if (body.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('the sealed value is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
      decipher.setAAD(additionalData(context, rowBound ? row : undefined));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('the sealed value does not authenticate (altered, or sealed for another place)');
      }
    },
  };
}

/** The data key from `auth.encryptionKey` (32 bytes, base64/base64url or 64 hex characters) or, without one, HKDF-SHA256 of the master key. */
export function dataKeyFrom(auth: { masterKey?: string; encryptionKey?: string }): Buffer {
  if (auth.encryptionKey) return parseEncryptionKey(auth.encryptionKey);
  if (!auth.masterKey) throw new SecretBoxError('no master key and no encryption key to derive the data key from');
  return Buffer.from(hkdfSync('sha256', Buffer.from(auth.masterKey, 'utf8'), HKDF_SALT, HKDF_INFO, KEY_BYTES));
}

export function secretBoxFor(auth: { masterKey?: string; encryptionKey?: string }): SecretBox {
  return createSecretBox(dataKeyFrom(auth));
}

export function parseEncryptionKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64') // accepts the standard and the URL-safe alphabets
      : undefined;
  if (!key || key.length !== KEY_BYTES) {
    throw new SecretBoxError('the encryption key (GATEWAY_ENCRYPTION_KEY / auth.encryptionKey) must be 32 bytes as 64 hex characters or base64 (43-44 characters)');
  }
  return key;
}

/** a new random encryption key, base64url (what `openssl rand -base64 32` also gives, in the other alphabet) */
export const generateEncryptionKey = (): string => randomBytes(KEY_BYTES).toString('base64url');
