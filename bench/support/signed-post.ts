// A signed webhook POST with undici's Pool, the bare counterpart of one dispatcher attempt (same headers, same HMAC).
import { randomUUID } from 'node:crypto';
import type { Pool } from 'undici';
import { signBody, signatureHeader } from '../../src/webhooks/signer.js';

export const BENCH_HMAC_KEY = 'bench-hmac-key-0123456789abcdef0123456789abcdef';

export function signedPost(pool: Pool, path: string, body: string, event: string, extra: Record<string, string> = {}): Promise<void> {
  const bytes = Buffer.from(body);
  return pool
    .request({
      path,
      method: 'POST',
      body: bytes,
      headers: {
        ...extra,
        'Content-Type': 'application/json',
        'X-Webhook-Signature': signatureHeader(signBody(bytes, BENCH_HMAC_KEY), false),
        'X-Webhook-Id': randomUUID(),
        'X-Webhook-Event': event,
        'X-Webhook-Timestamp': String(Math.floor(Date.now() / 1000)),
        'X-Webhook-Attempt': '1',
      },
    })
    .then((res) => {
      if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
      return res.body.dump();
    });
}
