// A session's lease is taken on another connection than the one that writes the session's row (the leases are the
// cluster's own work), so it may be taken before that row is committed: the lease no longer references the row. A
// session's deletion removes its lease (sessions repository) instead of the cascade. SQLite rebuilds the table to drop
// the reference; PostgreSQL drops the constraint.
export default `
CREATE TABLE session_leases_new (
  session     TEXT PRIMARY KEY,
  node        TEXT NOT NULL,
  epoch       INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  move_to     TEXT
);
INSERT INTO session_leases_new (session, node, epoch, expires_at, move_to) SELECT session, node, epoch, expires_at, move_to FROM session_leases;
DROP TABLE session_leases;
ALTER TABLE session_leases_new RENAME TO session_leases;
CREATE INDEX session_leases_by_node ON session_leases (node);
`;

/** The same schema on PostgreSQL. */
export const postgres = `
ALTER TABLE session_leases DROP CONSTRAINT session_leases_session_fkey;
`;
