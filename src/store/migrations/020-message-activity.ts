// What happened to each message after it was stored (issue 30): every ack with its time and who gave it (a group's
// members each ack), reactions and poll votes (the newest per person), and each edit's text. kind: sent, delivered,
// read, reaction, vote or edit. actor: who (a JID; '' where the ack names nobody); an edit's actor is its time,
// so every edit is kept. An ack keeps the first time it was reached; a reaction or vote is replaced by a newer one. A
// message's rows go with it (the trigger), whatever removes it; retention also removes those of messages never stored.
export default `
CREATE TABLE message_activity (
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  chat_id     TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  kind        TEXT NOT NULL,
  actor       TEXT NOT NULL,
  value       TEXT,
  at          INTEGER NOT NULL,
  PRIMARY KEY (session, chat_id, message_id, kind, actor)
) WITHOUT ROWID;
CREATE INDEX message_activity_by_time ON message_activity (at);

CREATE TRIGGER message_activity_on_delete AFTER DELETE ON messages BEGIN
  DELETE FROM message_activity WHERE session = OLD.session AND chat_id = OLD.chat_id AND message_id = OLD.id;
END;
`;

/** The same on PostgreSQL: a trigger function. */
export const postgres = `
CREATE TABLE message_activity (
  session     TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  chat_id     TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  kind        TEXT NOT NULL,
  actor       TEXT NOT NULL,
  value       TEXT,
  at          BIGINT NOT NULL,
  PRIMARY KEY (session, chat_id, message_id, kind, actor)
);
CREATE INDEX message_activity_by_time ON message_activity (at);

CREATE FUNCTION message_activity_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM message_activity WHERE session = OLD.session AND chat_id = OLD.chat_id AND message_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER message_activity_on_delete AFTER DELETE ON messages FOR EACH ROW EXECUTE FUNCTION message_activity_on_delete();
`;
