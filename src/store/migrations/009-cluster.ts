// Several daemons on one PostgreSQL database (store.kind: postgres): the nodes, each with the URL the others forward to
// and its last heartbeat, and which node runs each session, under a lease it renews. A takeover raises the epoch; writes
// of a session carry the epoch they were made under, so a node that lost its lease cannot write over the new owner's.
// Times are the database server's clock, in ms: nodes' own clocks never decide a lease. (Created on SQLite too, where
// one daemon never uses them, so both stores keep one schema.)
export default `
CREATE TABLE nodes (
  id            TEXT PRIMARY KEY,
  url           TEXT NOT NULL,
  started_at    INTEGER NOT NULL,
  heartbeat_at  INTEGER NOT NULL
);

CREATE TABLE session_leases (
  session     TEXT PRIMARY KEY REFERENCES sessions(name) ON DELETE CASCADE,
  node        TEXT NOT NULL,
  epoch       INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  move_to     TEXT
);
CREATE INDEX session_leases_by_node ON session_leases (node);
`;

/** The same schema on PostgreSQL. */
export const postgres = `
CREATE TABLE nodes (
  id            TEXT PRIMARY KEY,
  url           TEXT NOT NULL,
  started_at    BIGINT NOT NULL,
  heartbeat_at  BIGINT NOT NULL
);

CREATE TABLE session_leases (
  session     TEXT PRIMARY KEY REFERENCES sessions(name) ON DELETE CASCADE,
  node        TEXT NOT NULL,
  epoch       BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  move_to     TEXT
);
CREATE INDEX session_leases_by_node ON session_leases (node);
`;
