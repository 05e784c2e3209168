// The chat list (issue 30): one row per chat of a session, with its last message, unread count and state (archived,
// pinned, muted), kept current by triggers on the messages table (every way a message is stored: received, sent,
// history) and by the chat events. read_at: the time up to which the chat counts as read (the session's own newest
// message, or a read marker); mute_until: ms, -1 for good. The rows of messages already stored are counted in once.
export default `
CREATE TABLE chats (
  session          TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  chat_id          TEXT NOT NULL,
  last_message_id  TEXT,
  last_type        TEXT,
  last_text        TEXT,
  last_from_me     INTEGER,
  last_status      TEXT,
  last_at          INTEGER NOT NULL DEFAULT 0,
  unread           INTEGER NOT NULL DEFAULT 0,
  read_at          INTEGER NOT NULL DEFAULT 0,
  archived         INTEGER NOT NULL DEFAULT 0,
  pinned_at        INTEGER,
  mute_until       INTEGER,
  PRIMARY KEY (session, chat_id)
) WITHOUT ROWID;
CREATE INDEX chats_by_activity ON chats (session, last_at, chat_id);

CREATE TRIGGER chats_on_message AFTER INSERT ON messages BEGIN
  INSERT INTO chats (session, chat_id, last_message_id, last_type, last_text, last_from_me, last_status, last_at, unread, read_at)
  VALUES (NEW.session, NEW.chat_id, NEW.id, NEW.type, substr(NEW.text, 1, 200), NEW.from_me, NEW.status, NEW.timestamp,
          1 - NEW.from_me, NEW.from_me * NEW.timestamp)
  ON CONFLICT (session, chat_id) DO UPDATE SET
    last_message_id = CASE WHEN NEW.timestamp >= chats.last_at THEN NEW.id ELSE chats.last_message_id END,
    last_type = CASE WHEN NEW.timestamp >= chats.last_at THEN NEW.type ELSE chats.last_type END,
    last_text = CASE WHEN NEW.timestamp >= chats.last_at THEN substr(NEW.text, 1, 200) ELSE chats.last_text END,
    last_from_me = CASE WHEN NEW.timestamp >= chats.last_at THEN NEW.from_me ELSE chats.last_from_me END,
    last_status = CASE WHEN NEW.timestamp >= chats.last_at THEN NEW.status ELSE chats.last_status END,
    last_at = MAX(chats.last_at, NEW.timestamp),
    unread = CASE WHEN NEW.from_me = 1 AND NEW.timestamp >= chats.read_at THEN 0
                  WHEN NEW.from_me = 0 AND NEW.timestamp > chats.read_at THEN chats.unread + 1
                  ELSE chats.unread END,
    read_at = CASE WHEN NEW.from_me = 1 THEN MAX(chats.read_at, NEW.timestamp) ELSE chats.read_at END;
END;

CREATE TRIGGER chats_on_message_change AFTER UPDATE OF status, text ON messages BEGIN
  UPDATE chats SET last_status = NEW.status, last_text = substr(NEW.text, 1, 200)
  WHERE session = NEW.session AND chat_id = NEW.chat_id AND last_message_id = NEW.id;
END;

INSERT INTO chats (session, chat_id, last_message_id, last_type, last_text, last_from_me, last_status, last_at)
  SELECT session, chat_id, id, type, substr(text, 1, 200), from_me, status, MAX(timestamp) FROM messages GROUP BY session, chat_id;
`;

/** The same on PostgreSQL: a trigger function per trigger. */
export const postgres = `
CREATE TABLE chats (
  session          TEXT NOT NULL REFERENCES sessions(name) ON DELETE CASCADE,
  chat_id          TEXT NOT NULL,
  last_message_id  TEXT,
  last_type        TEXT,
  last_text        TEXT,
  last_from_me     INTEGER,
  last_status      TEXT,
  last_at          BIGINT NOT NULL DEFAULT 0,
  unread           INTEGER NOT NULL DEFAULT 0,
  read_at          BIGINT NOT NULL DEFAULT 0,
  archived         INTEGER NOT NULL DEFAULT 0,
  pinned_at        BIGINT,
  mute_until       BIGINT,
  PRIMARY KEY (session, chat_id)
);
CREATE INDEX chats_by_activity ON chats (session, last_at, chat_id);

CREATE FUNCTION chats_on_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chats AS c (session, chat_id, last_message_id, last_type, last_text, last_from_me, last_status, last_at, unread, read_at)
  VALUES (NEW.session, NEW.chat_id, NEW.id, NEW.type, substr(NEW.text, 1, 200), NEW.from_me, NEW.status, NEW.timestamp,
          1 - NEW.from_me, NEW.from_me * NEW.timestamp)
  ON CONFLICT (session, chat_id) DO UPDATE SET
    last_message_id = CASE WHEN NEW.timestamp >= c.last_at THEN NEW.id ELSE c.last_message_id END,
    last_type = CASE WHEN NEW.timestamp >= c.last_at THEN NEW.type ELSE c.last_type END,
    last_text = CASE WHEN NEW.timestamp >= c.last_at THEN substr(NEW.text, 1, 200) ELSE c.last_text END,
    last_from_me = CASE WHEN NEW.timestamp >= c.last_at THEN NEW.from_me ELSE c.last_from_me END,
    last_status = CASE WHEN NEW.timestamp >= c.last_at THEN NEW.status ELSE c.last_status END,
    last_at = GREATEST(c.last_at, NEW.timestamp),
    unread = CASE WHEN NEW.from_me = 1 AND NEW.timestamp >= c.read_at THEN 0
                  WHEN NEW.from_me = 0 AND NEW.timestamp > c.read_at THEN c.unread + 1
                  ELSE c.unread END,
    read_at = CASE WHEN NEW.from_me = 1 THEN GREATEST(c.read_at, NEW.timestamp) ELSE c.read_at END;
  RETURN NULL;
END $$;
CREATE TRIGGER chats_on_message AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION chats_on_message();

CREATE FUNCTION chats_on_message_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE chats SET last_status = NEW.status, last_text = substr(NEW.text, 1, 200)
  WHERE session = NEW.session AND chat_id = NEW.chat_id AND last_message_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER chats_on_message_change AFTER UPDATE OF status, text ON messages FOR EACH ROW EXECUTE FUNCTION chats_on_message_change();

INSERT INTO chats (session, chat_id, last_message_id, last_type, last_text, last_from_me, last_status, last_at)
  SELECT DISTINCT ON (session, chat_id) session, chat_id, id, type, substr(text, 1, 200), from_me, status, timestamp
  FROM messages ORDER BY session, chat_id, timestamp DESC;
`;
