// Repository of messages (sent and received) and of the correspondents who have written to each session. A message's
// engine secret (a poll's) and its protocol copy (which holds media keys and message secrets) are sealed at rest, each
// bound to its row.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { rowSealer } from './sealed-columns.js';
import { MESSAGE_WORDS } from './migrations/019-history-search.js';
import type { DeliveryStatus, MessageStatus, MessageType } from '../engine/types.js';
import { inListQuery } from './in-list.js';
import { RecentWrites } from './recent-writes.js';

export interface MessageRow {
  session: string;
  chatId: string;
  id: string;
  sender: string | null;
  fromMe: boolean;
  type: MessageType;
  text: string | null;
  mediaId: string | null;
  quotedId: string | null;
  status: MessageStatus | 'received';
  starred: boolean;
  revoked: boolean;
  edited: boolean;
  secret: string | null;
  extra: Record<string, unknown> | null;
  raw: string | null;
  timestamp: number;
}

interface RawMessage {
  session: string;
  chat_id: string;
  id: string;
  sender: string | null;
  from_me: number;
  type: MessageType;
  text: string | null;
  media_id: string | null;
  quoted_id: string | null;
  status: MessageRow['status'];
  starred: number;
  revoked: number;
  edited: number;
  secret: string | null;
  extra: string | null;
  raw: string | null;
  timestamp: number;
}

const toRowWith = (open: (sealed: string | null, r: RawMessage, column: 'secret' | 'raw') => string | null, r: RawMessage): MessageRow => ({
  session: r.session,
  chatId: r.chat_id,
  id: r.id,
  sender: r.sender,
  fromMe: r.from_me === 1,
  type: r.type,
  text: r.text,
  mediaId: r.media_id,
  quotedId: r.quoted_id,
  status: r.status,
  starred: r.starred === 1,
  revoked: r.revoked === 1,
  edited: r.edited === 1,
  secret: open(r.secret, r, 'secret'),
  extra: r.extra === null ? null : (JSON.parse(r.extra) as Record<string, unknown>),
  raw: open(r.raw, r, 'raw'),
  timestamp: r.timestamp,
});

export type NewMessage = Omit<MessageRow, 'starred' | 'revoked' | 'edited'>;

/** Status only moves forward: pending → sent → delivered → read. */
const STATUS_RANK: Record<string, number> = { pending: 0, failed: 0, sent: 1, delivered: 2, read: 3, received: 0 };

export type MessagesRepo = ReturnType<typeof createMessagesRepo>;

/** A media record deleted with its message: where its bytes were (the local blob, the S3 object). */
export interface PrunedMedia {
  id: string;
  blob: string | null;
  s3Key: string | null;
}

export interface PrunedBatch {
  messages: number;
  media: PrunedMedia[];
}

/** The most messages of a history sync written in one tick, and the most ids asked about in one query. */
export const HISTORY_CHUNK = 1000;

/** How existsMany names a stored message: its chat and its id. */
export const messageKey = (chatId: string, id: string): string => `${chatId}\u0000${id}`;

export function createMessagesRepo(db: Db, box: SecretBox) {
  const sealers = { secret: rowSealer(box, 'messages', 'secret'), raw: rowSealer(box, 'messages', 'raw') };
  const toRow = (r: RawMessage) =>
    toRowWith((sealed, row, column) => (sealed === null ? null : sealers[column].open(sealed, [row.session, row.chat_id, row.id])), r);
  const sealed = (value: string | null, m: NewMessage, column: 'secret' | 'raw') =>
    value === null ? null : sealers[column].seal(value, [m.session, m.chatId, m.id]);
  const insert = db.prepare(
    `INSERT INTO messages (session, chat_id, id, sender, from_me, type, text, media_id, quoted_id, status, secret, extra, raw, timestamp)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session, id, chat_id) DO NOTHING`,
  );
  const byId = db.prepare('SELECT * FROM messages WHERE session = ? AND id = ? ORDER BY timestamp DESC LIMIT 1');
  const byChatAndId = db.prepare('SELECT * FROM messages WHERE session = ? AND chat_id = ? AND id = ?');
  // a failed message ranks with a pending one: a late ack or receipt still moves it on (the truth wins)
  const advance = db.prepare(
    `UPDATE messages SET status = ? WHERE session = ? AND id = ? AND chat_id = ?
       AND (CASE status WHEN 'pending' THEN 0 WHEN 'failed' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 0 END) < ?`,
  );
  // only a message not yet delivered can fail: one a recipient got stays delivered (its failure is still kept)
  const fail = db.prepare(`UPDATE messages SET status = 'failed' WHERE session = ? AND id = ? AND chat_id = ? AND status IN ('pending', 'sent')`);
  const setText = db.prepare('UPDATE messages SET text = ?, edited = 1 WHERE session = ? AND chat_id = ? AND id = ?');
  const setRevoked = db.prepare('UPDATE messages SET revoked = 1, text = NULL WHERE session = ? AND chat_id = ? AND id = ?');
  const setStarred = db.prepare('UPDATE messages SET starred = ? WHERE session = ? AND chat_id = ? AND id = ?');
  const setMedia = db.prepare('UPDATE messages SET media_id = ? WHERE session = ? AND chat_id = ? AND id = ?');
  // retention: the oldest messages first, a batch at a time, with their media records, and the chats they leave behind
  const oldestBefore = db.prepare('SELECT session, chat_id, id, media_id FROM messages WHERE timestamp < ? ORDER BY timestamp, id LIMIT ?');
  const mediaOf = db.prepare('SELECT id, blob, s3_key FROM media WHERE id = ?');
  const deleteMedia = db.prepare('DELETE FROM media WHERE id = ?');
  const deleteOne = db.prepare('DELETE FROM messages WHERE session = ? AND chat_id = ? AND id = ?');
  // what happened to messages never stored (a reaction to one older than the store): kept no longer than messages
  const deleteOldActivity = db.prepare('DELETE FROM message_activity WHERE at < ?');
  const chatLast = db.prepare('SELECT last_message_id FROM chats WHERE session = ? AND chat_id = ?').pluck();
  const newestLeft = db.prepare('SELECT id, type, text, from_me, status FROM messages WHERE session = ? AND chat_id = ? ORDER BY timestamp DESC, id DESC LIMIT 1');
  const setLast = db.prepare(
    'UPDATE chats SET last_message_id = ?, last_type = ?, last_text = ?, last_from_me = ?, last_status = ? WHERE session = ? AND chat_id = ?',
  );
  const clearLast = db.prepare(
    'UPDATE chats SET last_message_id = NULL, last_type = NULL, last_text = NULL, last_from_me = NULL, last_status = NULL, unread = 0 WHERE session = ? AND chat_id = ?',
  );
  // an unread count never exceeds the unread messages still stored (received after the chat's read marker)
  const capUnread = db.prepare(
    `UPDATE chats SET unread = (SELECT COUNT(*) FROM messages m WHERE m.session = chats.session AND m.chat_id = chats.chat_id AND m.from_me = 0 AND m.timestamp > chats.read_at)
     WHERE session = ? AND chat_id = ? AND unread > (SELECT COUNT(*) FROM messages m WHERE m.session = chats.session AND m.chat_id = chats.chat_id AND m.from_me = 0 AND m.timestamp > chats.read_at)`,
  );
  const pruneBatch = db.transaction(async (cutoffMs: number, limit: number): Promise<PrunedBatch> => {
    const rows = (await oldestBefore.all(cutoffMs, limit)) as Array<{ session: string; chat_id: string; id: string; media_id: string | null }>;
    const media: PrunedMedia[] = [];
    const chats = new Map<string, { session: string; chatId: string; ids: Set<string> }>();
    for (const row of rows) {
      if (row.media_id) {
        const record = (await mediaOf.get(row.media_id)) as { id: string; blob: string | null; s3_key: string | null } | undefined;
        if (record) {
          media.push({ id: record.id, blob: record.blob, s3Key: record.s3_key });
          await deleteMedia.run(record.id);
        }
      }
      await deleteOne.run(row.session, row.chat_id, row.id);
      const key = `${row.session}\u0000${row.chat_id}`;
      const chat = chats.get(key) ?? { session: row.session, chatId: row.chat_id, ids: new Set<string>() };
      chat.ids.add(row.id);
      chats.set(key, chat);
    }
    // the chat list: a chat whose last message went shows the newest one left (none: no last message, nothing unread)
    for (const { session, chatId, ids } of chats.values()) {
      const last = (await chatLast.get(session, chatId)) as string | null | undefined;
      if (last !== undefined && last !== null && ids.has(last)) {
        const left = (await newestLeft.get(session, chatId)) as { id: string; type: string; text: string | null; from_me: number; status: string } | undefined;
        if (left) await setLast.run(left.id, left.type, left.text === null ? null : left.text.slice(0, 200), left.from_me, left.status, session, chatId);
        else await clearLast.run(session, chatId);
      }
      await capUnread.run(session, chatId);
    }
    if (rows.length < limit) await deleteOldActivity.run(cutoffMs);
    return { messages: rows.length, media };
  });
  const recentPage = db.prepare('SELECT * FROM messages WHERE session = ? ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?');
  const countOf = db.prepare('SELECT COUNT(*) FROM messages WHERE session = ?').pluck();
  const upsertCorrespondent = db.prepare(
    `INSERT INTO correspondents (session, jid, first_at, last_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session, jid) DO UPDATE SET last_at = excluded.last_at`,
  );
  /** correspondents written recently: their last_at is refreshed at most once a minute */
  const recentlyRecorded = new RecentWrites();
  const hasCorrespondent = db.prepare('SELECT 1 FROM correspondents WHERE session = ? AND jid = ?').pluck();

  const existing = inListQuery<{ chat_id: string; id: string }>(db, (ids) => `SELECT chat_id, id FROM messages WHERE session = ? AND id IN (${ids})`);
  const chatOldest = db.prepare('SELECT * FROM messages WHERE session = ? AND chat_id = ? ORDER BY timestamp, id LIMIT 1');
  const chatOldestTime = db.prepare('SELECT MIN(timestamp) FROM messages WHERE session = ? AND chat_id = ?').pluck();
  const saveUnread = db.prepare('SELECT unread, read_at FROM chats WHERE session = ? AND chat_id = ?');
  const restoreUnread = db.prepare('UPDATE chats SET unread = ?, read_at = ? WHERE session = ? AND chat_id = ?');
  const chatNewest = db.prepare('SELECT * FROM messages WHERE session = ? AND chat_id = ? ORDER BY timestamp DESC, id DESC LIMIT ?');
  const chatBefore = db.prepare(
    'SELECT * FROM messages WHERE session = ? AND chat_id = ? AND (timestamp < ? OR (timestamp = ? AND id < ?)) ORDER BY timestamp DESC, id DESC LIMIT ?',
  );
  const chatAfter = db.prepare(
    'SELECT * FROM messages WHERE session = ? AND chat_id = ? AND (timestamp > ? OR (timestamp = ? AND id > ?)) ORDER BY timestamp, id LIMIT ?',
  );
  // newest first; `chat` NULL for every chat of the session (the cast types the parameter for PostgreSQL)
  const search =
    db.dialect === 'postgres'
      ? db.prepare(
          `SELECT * FROM messages WHERE session = ? AND (CAST(? AS TEXT) IS NULL OR chat_id = CAST(? AS TEXT)) AND ${MESSAGE_WORDS} @@ to_tsquery('simple', ?)
           ORDER BY timestamp DESC, id DESC LIMIT ?`,
        )
      : db.prepare(
          `SELECT m.* FROM messages_fts f JOIN message_search s ON s.rowid = f.rowid
             JOIN messages m ON m.session = s.session AND m.chat_id = s.chat_id AND m.id = s.id
           WHERE s.session = ? AND (CAST(? AS TEXT) IS NULL OR s.chat_id = CAST(? AS TEXT)) AND messages_fts MATCH ?
           ORDER BY f.rowid DESC LIMIT ?`,
        );
  // SQLite: the text of messages stored since the last batch, into the search index (migration 019)
  const indexBatch =
    db.dialect === 'sqlite'
      ? {
          upTo: db.prepare('SELECT up_to FROM message_search_indexed').pluck(),
          last: db.prepare('SELECT MAX(rowid) FROM (SELECT rowid FROM message_search WHERE rowid > ? ORDER BY rowid LIMIT ?)').pluck(),
          insert: db.prepare(
            `INSERT INTO messages_fts (rowid, text) SELECT s.rowid, m.text FROM message_search s
               JOIN messages m ON m.session = s.session AND m.chat_id = s.chat_id AND m.id = s.id
             WHERE s.rowid > ? AND s.rowid <= ? AND m.text IS NOT NULL`,
          ),
          mark: db.prepare('UPDATE message_search_indexed SET up_to = ?'),
        }
      : undefined;
  const indexSearch = db.transaction(async (limit: number): Promise<number> => {
    const from = Number(await indexBatch!.upTo.get());
    const to = (await indexBatch!.last.get(from, limit)) as number | null;
    if (to === null) return 0;
    await indexBatch!.insert.run(from, to);
    await indexBatch!.mark.run(to);
    return to - from;
  });
  /** opens this store's tick (or joins the open one): what is staged next commits with it */
  const beginWrite = () => db.tick?.join();

  // positional parameters: binding fourteen named ones costs a third of the insert
  const stageOne = (m: NewMessage) =>
    insert.stage(
      m.session, m.chatId, m.id, m.sender, m.fromMe ? 1 : 0, m.type, m.text, m.mediaId, m.quotedId, m.status,
      sealed(m.secret, m, 'secret'), m.extra ? JSON.stringify(m.extra) : null, sealed(m.raw, m, 'raw'), m.timestamp,
    );

  return {
    beginWrite,
    /** staged into the tick (joined here), with the event that reports it */
    insert(message: NewMessage): void {
      beginWrite();
      stageOne(message);
    },
    /**
     * One chunk of a history sync (at most HISTORY_CHUNK rows: the caller yields between chunks), staged into the tick
     * (joined here: the chunk commits with the tick's other writes); settles once that tick has committed.
     */
    insertBatch(batch: NewMessage[]): Promise<void> {
      beginWrite();
      for (const message of batch) stageOne(message);
      return db.tick?.committed() ?? Promise.resolve();
    },
    /**
     * A batch of messages older than every stored one of their chats (a backfill's answer): the chat list's unread state
     * (unread count, read point) of each of their chats is kept as it was, for older history is no news (the insert
     * trigger would count the received ones unread, and a sent one would mark the newer ones read). Settles once
     * committed, as insertBatch.
     */
    async insertOlderBatch(batch: NewMessage[]): Promise<void> {
      const chats = [...new Set(batch.map((m) => `${m.session}\u0000${m.chatId}`))].map((key) => key.split('\u0000') as [string, string]);
      const kept: Array<{ session: string; chatId: string; unread: number; readAt: number }> = [];
      for (const [session, chatId] of chats) {
        const oldest = (await chatOldestTime.get(session, chatId)) as number | string | null;
        const state = (await saveUnread.get(session, chatId)) as { unread: number; read_at: number | string } | undefined;
        // only a chat whose stored messages are all newer than the batch's: otherwise the batch is ordinary history
        const newestOfBatch = Math.max(...batch.filter((m) => m.session === session && m.chatId === chatId).map((m) => m.timestamp));
        if (state && oldest !== null && Number(oldest) > newestOfBatch) kept.push({ session, chatId, unread: state.unread, readAt: Number(state.read_at) });
      }
      beginWrite();
      for (const message of batch) stageOne(message);
      for (const chat of kept) restoreUnread.stage(chat.unread, chat.readAt, chat.session, chat.chatId);
      await (db.tick?.committed() ?? Promise.resolve());
    },
    /** by id alone (routes that only name the message); chatId narrows when given */
    async find(session: string, id: string, chatId?: string): Promise<MessageRow | undefined> {
      const raw = (await (chatId ? byChatAndId.get(session, chatId, id) : byId.get(session, id))) as RawMessage | undefined;
      return raw && toRow(raw);
    },
    /** Moves a message's status forward; false when it is unknown or already there. */
    async advanceStatus(session: string, chatId: string, id: string, status: DeliveryStatus): Promise<boolean> {
      return (await advance.run(status, session, id, chatId, STATUS_RANK[status])).changes > 0;
    },
    exists: async (session: string, chatId: string, id: string): Promise<boolean> => (await byChatAndId.get(session, chatId, id)) !== undefined,
    /**
     * Which of these ids the session has stored, as messageKey(chatId, id): one query per HISTORY_CHUNK ids (a history
     * sync asks for a whole chunk at once, not message by message).
     */
    async existsMany(session: string, ids: string[]): Promise<Set<string>> {
      const found = new Set<string>();
      for (let start = 0; start < ids.length; start += HISTORY_CHUNK) {
        for (const row of await existing([session], ids.slice(start, start + HISTORY_CHUNK))) found.add(messageKey(row.chat_id, row.id));
      }
      return found;
    },
    /** whether a message of this id is stored, in any chat (its sealed columns are not opened) */
    existsById: async (session: string, id: string): Promise<boolean> => (await byId.get(session, id)) !== undefined,
    // the edits below are staged into the tick (joined here) with the event that reports them; nobody needs their count
    setText(session: string, chatId: string, id: string, text: string): void {
      beginWrite();
      setText.stage(text, session, chatId, id);
    },
    /** marks a sent message failed unless it was delivered or read */
    markFailed(session: string, chatId: string, id: string): void {
      beginWrite();
      fail.stage(session, id, chatId);
    },
    markRevoked(session: string, chatId: string, id: string): void {
      beginWrite();
      setRevoked.stage(session, chatId, id);
    },
    setStarred(session: string, chatId: string, id: string, starred: boolean): void {
      beginWrite();
      setStarred.stage(starred ? 1 : 0, session, chatId, id);
    },
    setMedia(session: string, chatId: string, id: string, mediaId: string): void {
      beginWrite();
      setMedia.stage(mediaId, session, chatId, id);
    },
    /**
     * Deletes up to `limit` messages older than `cutoffMs`, oldest first, with their media records, in one transaction;
     * the chat list follows (a chat's last message, its unread count) and the search index by its triggers. Returns what
     * went: the caller removes the media files (local blobs, S3 objects) once it is committed.
     */
    async pruneOlderThan(cutoffMs: number, limit = HISTORY_CHUNK): Promise<PrunedBatch> {
      const pruned = await pruneBatch(cutoffMs, limit);
      // settles once committed (the transaction may be a savepoint of the open tick): only then may the files go
      await db.tick?.committed();
      return pruned;
    },
    /** the session's messages, newest first, with the count of all it holds */
    async recent(session: string, limit: number, offset: number): Promise<{ rows: MessageRow[]; total: number }> {
      const [rows, total] = await Promise.all([recentPage.all(session, limit, offset), countOf.get(session)]);
      return { rows: (rows as RawMessage[]).map(toRow), total: total as number };
    },
    /**
     * A chat's messages: the newest (no cursor), those before a point (newest first) or after it (oldest first). A
     * point is a time (ms) and a message id, which breaks ties between messages of the same time.
     */
    async chatPage(session: string, chatId: string, from: { before?: { at: number; id: string }; after?: { at: number; id: string } }, limit: number): Promise<MessageRow[]> {
      const rows = from.after
        ? await chatAfter.all(session, chatId, from.after.at, from.after.at, from.after.id, limit)
        : from.before
          ? await chatBefore.all(session, chatId, from.before.at, from.before.at, from.before.id, limit)
          : await chatNewest.all(session, chatId, limit);
      return (rows as RawMessage[]).map(toRow);
    },
    /** the oldest message stored of a chat (what older history is asked for from) */
    async oldestOfChat(session: string, chatId: string): Promise<MessageRow | undefined> {
      const raw = (await chatOldest.get(session, chatId)) as RawMessage | undefined;
      return raw && toRow(raw);
    },
    /**
     * Indexes for search the text of at most `limit` messages stored since the last call (SQLite; PostgreSQL indexes as
     * it stores). Returns how many rows it went through: 0 once it has caught up.
     */
    async indexSearch(limit: number): Promise<number> {
      return indexBatch ? indexSearch(limit) : 0;
    },
    /**
     * Messages whose text has every word of `words` (letters and digits only), newest first; in one chat or all. A
     * prefix matches every word it begins (SQLite reads all their matches, where a whole word reads only the newest).
     */
    async search(session: string, words: ReadonlyArray<{ word: string; prefix: boolean }>, chatId: string | undefined, limit: number): Promise<MessageRow[]> {
      const query =
        db.dialect === 'postgres'
          ? words.map(({ word, prefix }) => (prefix ? `${word}:*` : word)).join(' & ')
          : words.map(({ word, prefix }) => `"${word}"${prefix ? '*' : ''}`).join(' ');
      return ((await search.all(session, chatId ?? null, chatId ?? null, query, limit)) as RawMessage[]).map(toRow);
    },
    /** staged into the tick (joined here); a correspondent seen in the last minute is not written again */
    recordCorrespondent(session: string, jid: string, at: number): void {
      if (!recentlyRecorded.due(`${session}\u0000${jid}`, at)) return;
      beginWrite();
      upsertCorrespondent.stage(session, jid, at, at);
    },
    /** after a lost tick: a correspondent counted written may not be stored */
    forgetRecentWrites: (): void => recentlyRecorded.forget(),
    hasCorrespondent: async (session: string, jid: string): Promise<boolean> => (await hasCorrespondent.get(session, jid)) !== undefined,
  };
}
