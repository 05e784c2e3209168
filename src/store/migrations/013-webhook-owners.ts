// Webhooks get an owner (who registered them: `master`, `key:<id>`; NULL = before owners were kept), so that one API
// key's webhooks can be counted against its quota (webhooks.maxWebhooksPerKey).
export default `
ALTER TABLE webhooks ADD COLUMN created_by TEXT;
CREATE INDEX webhooks_by_owner ON webhooks (created_by);
`;

/** The same schema on PostgreSQL. */
export const postgres = `
ALTER TABLE webhooks ADD COLUMN created_by TEXT;
CREATE INDEX webhooks_by_owner ON webhooks (created_by);
`;
