// Sessions, their engine credentials, API keys and daemon settings.
export default `
CREATE TABLE sessions (
  name            TEXT PRIMARY KEY,
  engine          TEXT NOT NULL,
  status          TEXT NOT NULL DEFAULT 'DISCONNECTED',
  status_reason   TEXT,
  should_run      INTEGER NOT NULL DEFAULT 0,
  phone_number    TEXT,
  push_name       TEXT,
  business_name   TEXT,
  platform        TEXT,
  lid             TEXT,
  proxy           TEXT,
  config          TEXT NOT NULL DEFAULT '{}',
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);

CREATE TABLE auth_state (
  session  TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  PRIMARY KEY (session, key)
) WITHOUT ROWID;

CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  hash        TEXT NOT NULL UNIQUE,
  prefix      TEXT NOT NULL,
  scopes      TEXT NOT NULL,
  sessions    TEXT,
  created_at  TEXT NOT NULL,
  last_used_at TEXT
);

CREATE TABLE settings (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, ids are identities, no WITHOUT ROWID. */
export const postgres = `
CREATE TABLE sessions (
  name            TEXT PRIMARY KEY,
  engine          TEXT NOT NULL,
  status          TEXT NOT NULL DEFAULT 'DISCONNECTED',
  status_reason   TEXT,
  should_run      INTEGER NOT NULL DEFAULT 0,
  phone_number    TEXT,
  push_name       TEXT,
  business_name   TEXT,
  platform        TEXT,
  lid             TEXT,
  proxy           TEXT,
  config          TEXT NOT NULL DEFAULT '{}',
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);

CREATE TABLE auth_state (
  session  TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  PRIMARY KEY (session, key)
);

CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  hash        TEXT NOT NULL UNIQUE,
  prefix      TEXT NOT NULL,
  scopes      TEXT NOT NULL,
  sessions    TEXT,
  created_at  TEXT NOT NULL,
  last_used_at TEXT
);

CREATE TABLE settings (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
`;
