// A webhook row written straight into a store, for tests of the outbox's repositories (no daemon, no route).
import { createSecretBox } from '../../src/auth/secret-box.js';
import type { Db } from '../../src/store/db.js';
import { createWebhooksRepo } from '../../src/store/webhooks.js';

/** Inserts an enabled webhook for every event and session, without retries; returns its id. */
export async function insertWebhook(db: Db, url: string): Promise<number> {
  const row = await createWebhooksRepo(db, createSecretBox(Buffer.alloc(32, 7))).insert({
    url,
    events: [],
    session: null,
    enabled: true,
    headers: [],
    retries: { attempts: 0, delaySeconds: 0, policy: 'constant' },
    hmacKey: 'sixteen-chars-ok',
    signatureScheme: 'body',
  });
  return row.id;
}
