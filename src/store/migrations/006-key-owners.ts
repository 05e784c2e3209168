// API keys get an owner (the key that created them; NULL = the operator) and an optional per-key rate limit;
// webhooks get a signature scheme (`body`, or `timestamp.body` which also signs X-Webhook-Timestamp); failed deliveries
// are pruned by age like succeeded ones.
export default `
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER;
CREATE INDEX api_keys_by_owner ON api_keys (created_by);

ALTER TABLE webhooks ADD COLUMN signature_scheme TEXT NOT NULL DEFAULT 'body';

CREATE INDEX deliveries_failed ON deliveries (updated_at) WHERE status = 'failed';
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, ids are identities, no WITHOUT ROWID. */
export const postgres = `
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER;
CREATE INDEX api_keys_by_owner ON api_keys (created_by);

ALTER TABLE webhooks ADD COLUMN signature_scheme TEXT NOT NULL DEFAULT 'body';

CREATE INDEX deliveries_failed ON deliveries (updated_at) WHERE status = 'failed';
`;
