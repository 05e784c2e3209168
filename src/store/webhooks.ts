// Repository of webhook registrations: target, filters, custom headers, retry settings and signing key (headers and key sealed at rest).
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { contextOf } from './sealed-columns.js';
import type { RetryPolicyName, RetrySettings } from '../webhooks/retry-policy.js';
import { SIGNATURE_SCHEMES, type SignatureScheme } from '../webhooks/signature-schemes.js';

export interface WebhookHeader {
  name: string;
  value: string;
}

export { SIGNATURE_SCHEMES, type SignatureScheme };

export interface WebhookRow {
  id: number;
  url: string;
  /** event types; [] means all */
  events: string[];
  /** null means all sessions */
  session: string | null;
  enabled: boolean;
  headers: WebhookHeader[];
  retries: RetrySettings;
  hmacKey: string;
  signatureScheme: SignatureScheme;
  createdAt: string;
  updatedAt: string;
}

export type WebhookFields = Omit<WebhookRow, 'id' | 'createdAt' | 'updatedAt'>;

interface RawWebhook {
  id: number;
  url: string;
  events: string;
  session: string | null;
  enabled: number;
  headers: string;
  retry_attempts: number;
  retry_delay_seconds: number;
  retry_policy: RetryPolicyName;
  hmac_key: string;
  signature_scheme: SignatureScheme;
  created_at: string;
  updated_at: string;
}

const HMAC_CONTEXT = contextOf('webhooks', 'hmac_key');
const HEADERS_CONTEXT = contextOf('webhooks', 'headers');

const toRowWith = (box: SecretBox, r: RawWebhook): WebhookRow => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  session: r.session,
  enabled: r.enabled === 1,
  headers: JSON.parse(box.open(r.headers, HEADERS_CONTEXT)) as WebhookHeader[],
  retries: { attempts: r.retry_attempts, delaySeconds: r.retry_delay_seconds, policy: r.retry_policy },
  hmacKey: box.open(r.hmac_key, HMAC_CONTEXT),
  signatureScheme: r.signature_scheme,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toParams = (box: SecretBox, w: WebhookFields) => ({
  url: w.url,
  events: JSON.stringify(w.events),
  session: w.session,
  enabled: w.enabled ? 1 : 0,
  headers: box.seal(JSON.stringify(w.headers), HEADERS_CONTEXT),
  attempts: w.retries.attempts,
  delaySeconds: w.retries.delaySeconds,
  policy: w.retries.policy,
  hmacKey: box.seal(w.hmacKey, HMAC_CONTEXT),
  signatureScheme: w.signatureScheme,
});

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;

export function createWebhooksRepo(db: Db, box: SecretBox) {
  const toRow = (r: RawWebhook) => toRowWith(box, r);
  const insert = db.prepare(
    `INSERT INTO webhooks (url, events, session, enabled, headers, retry_attempts, retry_delay_seconds, retry_policy, hmac_key, signature_scheme, created_by, created_at, updated_at)
     VALUES (@url, @events, @session, @enabled, @headers, @attempts, @delaySeconds, @policy, @hmacKey, @signatureScheme, @createdBy, @now, @now) RETURNING id`,
  );
  const countOwned = db.prepare('SELECT COUNT(*) FROM webhooks WHERE created_by = ?').pluck();
  const byId = db.prepare('SELECT * FROM webhooks WHERE id = ?');
  const page = db.prepare('SELECT * FROM webhooks ORDER BY id LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT COUNT(*) FROM webhooks').pluck();
  const enabled = db.prepare('SELECT * FROM webhooks WHERE enabled = 1 ORDER BY id');
  const update = db.prepare(
    `UPDATE webhooks SET url = @url, events = @events, session = @session, enabled = @enabled, headers = @headers,
       retry_attempts = @attempts, retry_delay_seconds = @delaySeconds, retry_policy = @policy, hmac_key = @hmacKey,
       signature_scheme = @signatureScheme, updated_at = @now
     WHERE id = @id`,
  );
  const failPending = db.prepare(
    `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, last_error = ?, updated_at = ? WHERE webhook_id = ? AND status = 'pending'`,
  );
  const remove = db.prepare('DELETE FROM webhooks WHERE id = ?');
  const idsOfSession = db.prepare('SELECT id FROM webhooks WHERE session = ?').pluck();

  /** Writes the new settings; disabling also fails the webhook's pending deliveries, in the same transaction. */
  const updateWebhook = db.transaction(async (id: number, fields: WebhookFields, disabledError: string): Promise<number> => {
    const { changes } = await update.run({ id, ...toParams(box, fields), now: new Date().toISOString() });
    if (changes && !fields.enabled) await failPending.run(disabledError, Date.now(), id);
    return changes;
  });

  return {
    /** `createdBy`: who registers it (`master`, `key:<id of its key family's root>`), counted by countOwnedBy */
    async insert(fields: WebhookFields, createdBy: string | null = null): Promise<WebhookRow> {
      const { id } = (await insert.get({ ...toParams(box, fields), createdBy, now: new Date().toISOString() })) as { id: number };
      return toRow((await byId.get(id)) as RawWebhook);
    },
    async get(id: number): Promise<WebhookRow | undefined> {
      const raw = (await byId.get(id)) as RawWebhook | undefined;
      return raw && toRow(raw);
    },
    list: async (limit: number, offset: number): Promise<WebhookRow[]> => ((await page.all(limit, offset)) as RawWebhook[]).map(toRow),
    count: async (): Promise<number> => (await count.get()) as number,
    countOwnedBy: async (createdBy: string): Promise<number> => (await countOwned.get(createdBy)) as number,
    listEnabled: async (): Promise<WebhookRow[]> => ((await enabled.all()) as RawWebhook[]).map(toRow),
    /** Replaces every field; returns the new row, or undefined when the webhook does not exist. */
    async update(id: number, fields: WebhookFields, disabledError = 'webhook disabled'): Promise<WebhookRow | undefined> {
      if (!(await updateWebhook(id, fields, disabledError))) return undefined;
      return toRow((await byId.get(id)) as RawWebhook);
    },
    /** Deletes the webhook; its deliveries go with it (ON DELETE CASCADE). */
    delete: async (id: number): Promise<boolean> => (await remove.run(id)).changes > 0,
    idsOfSession: async (session: string): Promise<number[]> => (await idsOfSession.all(session)) as number[],
  };
}
