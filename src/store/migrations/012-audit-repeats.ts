// Refused calls repeated by one caller (same action, same reason) are kept as one audit entry with a count and the time
// of the last repeat, instead of one row each: a client looping on a refused call wrote tens of thousands of rows a
// minute. `at` stays the time of the first.
export default `
ALTER TABLE audit_log ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1;
ALTER TABLE audit_log ADD COLUMN last_at INTEGER;
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT. */
export const postgres = `
ALTER TABLE audit_log ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1;
ALTER TABLE audit_log ADD COLUMN last_at BIGINT;
`;
