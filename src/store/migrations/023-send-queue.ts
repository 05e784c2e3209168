// The send governor (issue 31). send_queue: a session's sends that wait for their turn (state `queued`), each with the
// validated body, who queued it (URL media is fetched under that caller's policy when it is sent) and the message id
// chosen when it was queued, so a send cut by a crash goes out again under the same id after a restart; and, for one
// to two days, the first messages to people who never wrote (state `sent`, body gone), which the daily first-contact
// cap counts. queue_order orders a session's queue. api_keys.governor_exempt: the operator exempted the key's sends.
// sessions.paired_at (ms): when the session's account was paired (the warm-up ladder counts days from it); sessions
// paired before this version count as paired long ago (0).
export default `
CREATE TABLE send_queue (
  session        TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  id             TEXT NOT NULL,
  queue_order    INTEGER NOT NULL,
  message_id     TEXT NOT NULL,
  chat_id        TEXT NOT NULL,
  type           TEXT NOT NULL,
  state          TEXT NOT NULL,
  first_contact  INTEGER NOT NULL DEFAULT 0,
  command_id     TEXT,
  body           TEXT,
  caller         TEXT,
  bytes          INTEGER NOT NULL,
  queued_at      INTEGER NOT NULL,
  sent_at        INTEGER,
  PRIMARY KEY (session, id)
);
CREATE INDEX send_queue_order ON send_queue (session, state, queue_order);
ALTER TABLE api_keys ADD COLUMN governor_exempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN paired_at INTEGER;
UPDATE sessions SET paired_at = 0 WHERE phone_number IS NOT NULL;
`;

/** The same on PostgreSQL: times in ms and the queue order are BIGINT. */
export const postgres = `
CREATE TABLE send_queue (
  session        TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  id             TEXT NOT NULL,
  queue_order    BIGINT NOT NULL,
  message_id     TEXT NOT NULL,
  chat_id        TEXT NOT NULL,
  type           TEXT NOT NULL,
  state          TEXT NOT NULL,
  first_contact  INTEGER NOT NULL DEFAULT 0,
  command_id     TEXT,
  body           TEXT,
  caller         TEXT,
  bytes          BIGINT NOT NULL,
  queued_at      BIGINT NOT NULL,
  sent_at        BIGINT,
  PRIMARY KEY (session, id)
);
CREATE INDEX send_queue_order ON send_queue (session, state, queue_order);
ALTER TABLE api_keys ADD COLUMN governor_exempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN paired_at BIGINT;
UPDATE sessions SET paired_at = 0 WHERE phone_number IS NOT NULL;
`;
