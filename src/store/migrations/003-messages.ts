// Messages sent and received, media records, and who has written to each session.
export default `
CREATE TABLE messages (
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  chat_id     TEXT NOT NULL,
  id          TEXT NOT NULL,
  sender      TEXT,
  from_me     INTEGER NOT NULL,
  type        TEXT NOT NULL,
  text        TEXT,
  media_id    TEXT,
  quoted_id   TEXT,
  status      TEXT NOT NULL,
  starred     INTEGER NOT NULL DEFAULT 0,
  revoked     INTEGER NOT NULL DEFAULT 0,
  edited      INTEGER NOT NULL DEFAULT 0,
  secret      TEXT,
  extra       TEXT,
  raw         TEXT,
  timestamp   INTEGER NOT NULL,
  PRIMARY KEY (session, id, chat_id)
) WITHOUT ROWID;
CREATE INDEX messages_by_time ON messages (timestamp);

CREATE TABLE media (
  id          TEXT PRIMARY KEY,
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  message_id  TEXT NOT NULL,
  chat_id     TEXT,
  mime_type   TEXT NOT NULL,
  size        INTEGER,
  filename    TEXT,
  blob        TEXT,
  ref         TEXT,
  persisted   INTEGER NOT NULL DEFAULT 0,
  s3_key      TEXT,
  s3_url      TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX media_by_session ON media (session, created_at);

CREATE TABLE correspondents (
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid         TEXT NOT NULL,
  first_at    INTEGER NOT NULL,
  last_at     INTEGER NOT NULL,
  PRIMARY KEY (session, jid)
) WITHOUT ROWID;
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, ids are identities, no WITHOUT ROWID. */
export const postgres = `
CREATE TABLE messages (
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  chat_id     TEXT NOT NULL,
  id          TEXT NOT NULL,
  sender      TEXT,
  from_me     INTEGER NOT NULL,
  type        TEXT NOT NULL,
  text        TEXT,
  media_id    TEXT,
  quoted_id   TEXT,
  status      TEXT NOT NULL,
  starred     INTEGER NOT NULL DEFAULT 0,
  revoked     INTEGER NOT NULL DEFAULT 0,
  edited      INTEGER NOT NULL DEFAULT 0,
  secret      TEXT,
  extra       TEXT,
  raw         TEXT,
  timestamp   BIGINT NOT NULL,
  PRIMARY KEY (session, id, chat_id)
);
CREATE INDEX messages_by_time ON messages (timestamp);

CREATE TABLE media (
  id          TEXT PRIMARY KEY,
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  message_id  TEXT NOT NULL,
  chat_id     TEXT,
  mime_type   TEXT NOT NULL,
  size        BIGINT,
  filename    TEXT,
  blob        TEXT,
  ref         TEXT,
  persisted   INTEGER NOT NULL DEFAULT 0,
  s3_key      TEXT,
  s3_url      TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX media_by_session ON media (session, created_at);

CREATE TABLE correspondents (
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid         TEXT NOT NULL,
  first_at    BIGINT NOT NULL,
  last_at     BIGINT NOT NULL,
  PRIMARY KEY (session, jid)
);
`;
