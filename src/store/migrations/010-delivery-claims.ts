// Several daemons deliver from one outbox (store.kind: postgres): a node claims the due deliveries it attempts, until a
// time after which another node may take them (the claimer died mid-attempt); its outcome is written only while its claim
// holds. The index counts a webhook's live claims, which keeps its in-flight cap across nodes. (On SQLite too, unused by
// one daemon, so both stores keep one schema.)
export default `
ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
ALTER TABLE deliveries ADD COLUMN claimed_until INTEGER;
CREATE INDEX deliveries_claims ON deliveries (webhook_id, claimed_until) WHERE status = 'pending';
`;

/** The same schema on PostgreSQL. */
export const postgres = `
ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
ALTER TABLE deliveries ADD COLUMN claimed_until BIGINT;
CREATE INDEX deliveries_claims ON deliveries (webhook_id, claimed_until) WHERE status = 'pending';
`;
