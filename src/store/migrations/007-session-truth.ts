// Sessions keep why they last went down (`last_error_*`, shown as `lastError`); the phone-number ↔ LID pairs a session
// learns survive restarts (`identities`, bounded per session by pruning the least recently used, deleted with it).
export default `
ALTER TABLE sessions ADD COLUMN last_error_code TEXT;
ALTER TABLE sessions ADD COLUMN last_error_message TEXT;
ALTER TABLE sessions ADD COLUMN last_error_at TEXT;

CREATE TABLE identities (
  session   TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  pn        TEXT NOT NULL,
  lid       TEXT NOT NULL,
  used_at   INTEGER NOT NULL,
  PRIMARY KEY (session, pn)
) WITHOUT ROWID;
CREATE UNIQUE INDEX identities_by_lid ON identities (session, lid);
CREATE INDEX identities_by_use ON identities (session, used_at);
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, ids are identities, no WITHOUT ROWID. */
export const postgres = `
ALTER TABLE sessions ADD COLUMN last_error_code TEXT;
ALTER TABLE sessions ADD COLUMN last_error_message TEXT;
ALTER TABLE sessions ADD COLUMN last_error_at TEXT;

CREATE TABLE identities (
  session   TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  pn        TEXT NOT NULL,
  lid       TEXT NOT NULL,
  used_at   BIGINT NOT NULL,
  PRIMARY KEY (session, pn)
);
CREATE UNIQUE INDEX identities_by_lid ON identities (session, lid);
CREATE INDEX identities_by_use ON identities (session, used_at);
`;
