// History and search (issue 30): a chat's messages in time order (an index by chat and time), and full-text search over
// a session's messages. SQLite: an FTS5 index without content of its own (the text stays in messages), whose rows are
// numbered by message_search, which triggers on messages keep (stored, edited, revoked, pruned); the text is indexed in
// batches after it is stored (MessagesRepo.indexSearch), for an FTS5 insert made by a trigger costs five times one made
// by a statement. PostgreSQL: a GIN index on the tsvector of the text (MESSAGE_WORDS). Both index words as they are
// ('simple'/unicode61: any language, no stems), without their diacritics (on PostgreSQL the Latin ones, by translate).
export default `
CREATE INDEX messages_by_chat ON messages (session, chat_id, timestamp, id);

CREATE TABLE message_search (
  rowid    INTEGER PRIMARY KEY,
  session  TEXT NOT NULL,
  chat_id  TEXT NOT NULL,
  id       TEXT NOT NULL,
  UNIQUE (session, chat_id, id)
);
CREATE VIRTUAL TABLE messages_fts USING fts5(text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
-- the newest message_search row whose text is in messages_fts
CREATE TABLE message_search_indexed (one INTEGER PRIMARY KEY CHECK (one = 1), up_to INTEGER NOT NULL);
INSERT INTO message_search_indexed (one, up_to) VALUES (1, 0);

CREATE TRIGGER message_search_insert AFTER INSERT ON messages WHEN NEW.text IS NOT NULL BEGIN
  INSERT INTO message_search (session, chat_id, id) VALUES (NEW.session, NEW.chat_id, NEW.id);
END;

CREATE TRIGGER message_search_update AFTER UPDATE OF text ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = (SELECT rowid FROM message_search WHERE session = OLD.session AND chat_id = OLD.chat_id AND id = OLD.id);
  DELETE FROM message_search WHERE session = OLD.session AND chat_id = OLD.chat_id AND id = OLD.id;
  INSERT INTO message_search (session, chat_id, id) SELECT NEW.session, NEW.chat_id, NEW.id WHERE NEW.text IS NOT NULL;
END;

CREATE TRIGGER message_search_delete AFTER DELETE ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = (SELECT rowid FROM message_search WHERE session = OLD.session AND chat_id = OLD.chat_id AND id = OLD.id);
  DELETE FROM message_search WHERE session = OLD.session AND chat_id = OLD.chat_id AND id = OLD.id;
END;

INSERT INTO message_search (session, chat_id, id) SELECT session, chat_id, id FROM messages WHERE text IS NOT NULL ORDER BY timestamp;
`;

/**
 * PostgreSQL's search index: the words of a message's text, lower-cased and without Latin diacritics. Statements that
 * search write this very expression, so that PostgreSQL reads the index.
 */
export const MESSAGE_WORDS = `to_tsvector('simple', translate(lower(coalesce(text, '')),
  'àáâãäåāăąçćčďèéêëēėęěğìíîïīįıľłñńňòóôõöøōőŕřśşšťùúûüūůűųýÿźżž',
  'aaaaaaaaacccdeeeeeeeegiiiiiiillnnnoooooooorrssstuuuuuuuuyyzzz'))`;

/** The same on PostgreSQL. */
export const postgres = `
CREATE INDEX messages_by_chat ON messages (session, chat_id, timestamp, id);
CREATE INDEX messages_search ON messages USING GIN ((${MESSAGE_WORDS}));
`;
