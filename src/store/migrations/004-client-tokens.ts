// Client rules per session, daily send counts per ephemeral id, and the token epoch that revokes older tokens.
export default `
CREATE TABLE client_rules (
  session                TEXT PRIMARY KEY REFERENCES sessions(name) ON DELETE CASCADE,
  recipient_mode         TEXT NOT NULL,
  enabled                INTEGER NOT NULL,
  allowed_actions        TEXT NOT NULL,
  rate_limit_per_minute  INTEGER NOT NULL,
  daily_send_cap         INTEGER NOT NULL,
  allowed_origins        TEXT NOT NULL,
  updated_at             TEXT NOT NULL
);

CREATE TABLE client_daily_sends (
  session       TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  ephemeral_id  TEXT NOT NULL,
  day           TEXT NOT NULL,
  count         INTEGER NOT NULL,
  PRIMARY KEY (session, ephemeral_id, day)
) WITHOUT ROWID;

ALTER TABLE sessions ADD COLUMN client_token_epoch INTEGER NOT NULL DEFAULT 0;
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, ids are identities, no WITHOUT ROWID. */
export const postgres = `
CREATE TABLE client_rules (
  session                TEXT PRIMARY KEY REFERENCES sessions(name) ON DELETE CASCADE,
  recipient_mode         TEXT NOT NULL,
  enabled                INTEGER NOT NULL,
  allowed_actions        TEXT NOT NULL,
  rate_limit_per_minute  INTEGER NOT NULL,
  daily_send_cap         INTEGER NOT NULL,
  allowed_origins        TEXT NOT NULL,
  updated_at             TEXT NOT NULL
);

CREATE TABLE client_daily_sends (
  session       TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  ephemeral_id  TEXT NOT NULL,
  day           TEXT NOT NULL,
  count         INTEGER NOT NULL,
  PRIMARY KEY (session, ephemeral_id, day)
);

ALTER TABLE sessions ADD COLUMN client_token_epoch INTEGER NOT NULL DEFAULT 0;
`;
