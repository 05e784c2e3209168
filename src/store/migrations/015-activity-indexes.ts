// The overview's per-minute activity (GET /api/admin/activity) reads only indexes: messages by time with their direction,
// and failed deliveries by time with their webhook. The indexes they replace had the same leading column, so every
// statement that used them (pruning, the failed-count by time) still does, and no table row is read for the counts.
export default `
DROP INDEX messages_by_time;
CREATE INDEX messages_by_time ON messages (timestamp, from_me);
DROP INDEX deliveries_failed;
CREATE INDEX deliveries_failed ON deliveries (updated_at, webhook_id) WHERE status = 'failed';
`;

/** The same on PostgreSQL. */
export const postgres = `
DROP INDEX messages_by_time;
CREATE INDEX messages_by_time ON messages (timestamp, from_me);
DROP INDEX deliveries_failed;
CREATE INDEX deliveries_failed ON deliveries (updated_at, webhook_id) WHERE status = 'failed';
`;
