// Webhook body signing: HMAC-SHA256 hex digests, the X-Webhook-Signature header form, and timing-safe verification.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 of the exact body bytes keyed with the webhook's hmacKey, as lowercase hex. */
export function signBody(body: Buffer | string, key: string): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/** The header value: bare hex, or `sha256=<hex>` when the prefix setting is on. */
export function signatureHeader(hex: string, prefix: boolean): string {
  return prefix ? `sha256=${hex}` : hex;
}

/** Timing-safe check of a signature header (bare hex or `sha256=<hex>`, hex case-insensitive) against the body. */
export function verifySignature(body: Buffer | string, key: string, header: string): boolean {
  if (typeof header !== 'string') return false;
  let value = header.trim();
  if (value.slice(0, 7).toLowerCase() === 'sha256=') value = value.slice(7);
  if (!/^[0-9a-fA-F]{64}$/.test(value)) return false;
  const expected = Buffer.from(signBody(body, key), 'hex');
  const given = Buffer.from(value, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
