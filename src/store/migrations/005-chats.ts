// What a session learns from the network and the list routes answer from: contacts and the blocklist, last-known presence, followed channels, labels.
export default `
CREATE TABLE contacts (
  session        TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid            TEXT NOT NULL,
  phone_number   TEXT,
  lid            TEXT,
  name           TEXT,
  saved_name     TEXT,
  business_name  TEXT,
  picture_url    TEXT,
  blocked        INTEGER NOT NULL DEFAULT 0,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (session, jid)
) WITHOUT ROWID;
CREATE INDEX contacts_by_lid ON contacts (session, lid);

CREATE TABLE presences (
  session      TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid          TEXT NOT NULL,
  subscribed   INTEGER NOT NULL DEFAULT 0,
  presence     TEXT,
  last_seen    INTEGER,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (session, jid)
) WITHOUT ROWID;

CREATE TABLE channels (
  session      TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid          TEXT NOT NULL,
  role         TEXT NOT NULL,
  name         TEXT,
  muted        INTEGER NOT NULL DEFAULT 0,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (session, jid)
) WITHOUT ROWID;

CREATE TABLE labels (
  session   TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  id        TEXT NOT NULL,
  name      TEXT NOT NULL,
  color     INTEGER NOT NULL,
  PRIMARY KEY (session, id)
) WITHOUT ROWID;

CREATE TABLE label_chats (
  session    TEXT NOT NULL,
  label_id   TEXT NOT NULL,
  chat_id    TEXT NOT NULL,
  PRIMARY KEY (session, label_id, chat_id),
  FOREIGN KEY (session, label_id) REFERENCES labels (session, id) ON DELETE CASCADE
) WITHOUT ROWID;
`;

/** The same schema on PostgreSQL (store.kind: postgres): times in ms are BIGINT, ids are identities, no WITHOUT ROWID. */
export const postgres = `
CREATE TABLE contacts (
  session        TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid            TEXT NOT NULL,
  phone_number   TEXT,
  lid            TEXT,
  name           TEXT,
  saved_name     TEXT,
  business_name  TEXT,
  picture_url    TEXT,
  blocked        INTEGER NOT NULL DEFAULT 0,
  updated_at     BIGINT NOT NULL,
  PRIMARY KEY (session, jid)
);
CREATE INDEX contacts_by_lid ON contacts (session, lid);

CREATE TABLE presences (
  session      TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid          TEXT NOT NULL,
  subscribed   INTEGER NOT NULL DEFAULT 0,
  presence     TEXT,
  last_seen    BIGINT,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (session, jid)
);

CREATE TABLE channels (
  session      TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  jid          TEXT NOT NULL,
  role         TEXT NOT NULL,
  name         TEXT,
  muted        INTEGER NOT NULL DEFAULT 0,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (session, jid)
);

CREATE TABLE labels (
  session   TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  id        TEXT NOT NULL,
  name      TEXT NOT NULL,
  color     INTEGER NOT NULL,
  PRIMARY KEY (session, id)
);

CREATE TABLE label_chats (
  session    TEXT NOT NULL,
  label_id   TEXT NOT NULL,
  chat_id    TEXT NOT NULL,
  PRIMARY KEY (session, label_id, chat_id),
  FOREIGN KEY (session, label_id) REFERENCES labels (session, id) ON DELETE CASCADE
);
`;
