// Webhook body signing: HMAC-SHA256 hex digests over the body (scheme `body`) or over `${timestamp}.${body}`
// (scheme `timestamp.body`), the X-Webhook-Signature header form, and timing-safe verification.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SignatureScheme } from '../store/webhooks.js';

/** HMAC-SHA256 of the exact body bytes keyed with the webhook's hmacKey, as lowercase hex. */
export function signBody(body: Buffer | string, key: string): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/** HMAC-SHA256 of `${timestamp}.${body}` (timestamp = the X-Webhook-Timestamp value, Unix seconds), as lowercase hex. */
export function signTimestampedBody(timestamp: string, body: Buffer | string, key: string): string {
  return createHmac('sha256', key).update(`${timestamp}.`).update(body).digest('hex');
}

/**
 * X-Webhook-Signature-256, sent on every delivery whatever the webhook's scheme: `t=<unix s>,v1=<hex>`, the HMAC of
 * `${t}.${body}`, so that any receiver can refuse a replay (an old t, or a new t with the old v1).
 */
export function timestampedSignatureHeader(timestamp: string, body: Buffer | string, key: string): string {
  return `t=${timestamp},v1=${signTimestampedBody(timestamp, body, key)}`;
}

/** What a receiver does with X-Webhook-Signature-256: checks v1 over `${t}.${body}` and refuses a t more than `toleranceSeconds` from now. */
export function verifySignature256(
  body: Buffer | string,
  key: string,
  header: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  if (typeof header !== 'string') return false;
  const parts = new Map(header.split(',').map((part) => [part.slice(0, part.indexOf('=')).trim(), part.slice(part.indexOf('=') + 1).trim()]));
  const timestamp = parts.get('t');
  const digest = parts.get('v1');
  return timestamp !== undefined && digest !== undefined && verifyTimestampedSignature(body, key, digest, timestamp, options);
}

/** The signature of one attempt under a webhook's scheme. */
export function signDelivery(scheme: SignatureScheme, timestamp: string, body: Buffer | string, key: string): string {
  return scheme === 'timestamp.body' ? signTimestampedBody(timestamp, body, key) : signBody(body, key);
}

/** The header value: bare hex, or `sha256=<hex>` when the prefix setting is on. */
export function signatureHeader(hex: string, prefix: boolean): string {
  return prefix ? `sha256=${hex}` : hex;
}

/** Timing-safe check of a signature header (bare hex or `sha256=<hex>`, hex case-insensitive) against the body. */
export function verifySignature(body: Buffer | string, key: string, header: string): boolean {
  const given = headerDigest(header);
  return given !== undefined && digestEquals(given, signBody(body, key));
}

/**
 * What a receiver of the `timestamp.body` scheme does: checks the signature over `${timestamp}.${body}` and refuses a
 * timestamp more than `toleranceSeconds` away from now, so a captured delivery cannot be replayed later.
 */
export function verifyTimestampedSignature(
  body: Buffer | string,
  key: string,
  header: string,
  timestamp: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return false;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return false;
  const given = headerDigest(header);
  return given !== undefined && digestEquals(given, signTimestampedBody(timestamp, body, key));
}

function headerDigest(header: string): Buffer | undefined {
  if (typeof header !== 'string') return undefined;
  let value = header.trim();
  if (value.slice(0, 7).toLowerCase() === 'sha256=') value = value.slice(7);
  return /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : undefined;
}

function digestEquals(given: Buffer, expectedHex: string): boolean {
  const expected = Buffer.from(expectedHex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
