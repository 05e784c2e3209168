// Symmetric crypto helpers shared by the Noise handshake and the pairing flows (node:crypto only).
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, pbkdf2Sync, randomBytes } from 'node:crypto';

export const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

export const hmacSha256 = (key: Uint8Array, data: Uint8Array): Buffer => createHmac('sha256', key).update(data).digest();

export const hkdf = (ikm: Uint8Array, length: number, salt: Uint8Array = Buffer.alloc(0), info = ''): Buffer =>
  Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from(info), length));

/** The 12-byte IV the Noise handler derives from its counter (big-endian in the last four bytes). */
export const counterIv = (counter: number): Buffer => {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(counter, 8);
  return iv;
};

export function gcmEncrypt(key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

export function gcmDecrypt(key: Uint8Array, iv: Uint8Array, aad: Uint8Array, data: Uint8Array): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
}

export function aesCtr(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

export const pbkdf2 = (password: string, salt: Uint8Array, iterations: number): Buffer =>
  pbkdf2Sync(password, salt, iterations, 32, 'sha256');

export const random = (size: number): Buffer => randomBytes(size);

/** Big-endian unsigned integer of `bytes` bytes. */
export const uintBE = (value: number, bytes: number): Buffer => {
  const out = Buffer.alloc(bytes);
  out.writeUIntBE(value, 0, bytes);
  return out;
};

export const readUintBE = (data: Uint8Array | undefined): number => (data && data.length ? Buffer.from(data).readUIntBE(0, Math.min(6, data.length)) : 0);
