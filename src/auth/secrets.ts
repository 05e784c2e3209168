// Secret helpers: random keys, hashing for storage, constant-time comparison.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a secret: how keys are stored and compared (one-shot `hash`: no Hash object per request). */
export const sha256 = (value: string): Buffer => hash('sha256', value, 'buffer');

export const sha256Hex = (value: string): string => sha256(value).toString('hex');

export const randomToken = (bytes = 24): string => randomBytes(bytes).toString('base64url');

/** Compares two secrets by their SHA-256 digests in constant time (equal lengths, so the secrets' lengths never leak). */
export const digestsEqual = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);
