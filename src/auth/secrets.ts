// Secret helpers: random keys, hashing for storage, constant-time comparison.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export const randomToken = (bytes = 24): string => randomBytes(bytes).toString('base64url');

/** Compares two secrets in constant time (hashing first so lengths never leak). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
