// Repository of messages (sent and received) and of the correspondents who have written to each session. A message's
// engine secret (a poll's) and its protocol copy (which holds media keys and message secrets) are sealed at rest, each
// bound to its row.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { rowSealer } from './sealed-columns.js';
import type { DeliveryStatus, MessageType } from '../engine/types.js';

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
  status: DeliveryStatus | 'received';
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
const STATUS_RANK: Record<string, number> = { pending: 0, sent: 1, delivered: 2, read: 3, received: 0 };

export type MessagesRepo = ReturnType<typeof createMessagesRepo>;

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
  const advance = db.prepare(
    `UPDATE messages SET status = ? WHERE session = ? AND id = ? AND chat_id = ?
       AND (CASE status WHEN 'pending' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 0 END) < ?`,
  );
  const setText = db.prepare('UPDATE messages SET text = ?, edited = 1 WHERE session = ? AND chat_id = ? AND id = ?');
  const setRevoked = db.prepare('UPDATE messages SET revoked = 1, text = NULL WHERE session = ? AND chat_id = ? AND id = ?');
  const setStarred = db.prepare('UPDATE messages SET starred = ? WHERE session = ? AND chat_id = ? AND id = ?');
  const setMedia = db.prepare('UPDATE messages SET media_id = ? WHERE session = ? AND chat_id = ? AND id = ?');
  const prune = db.prepare('DELETE FROM messages WHERE timestamp < ?');
  const recentPage = db.prepare('SELECT * FROM messages WHERE session = ? ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?');
  const countOf = db.prepare('SELECT COUNT(*) FROM messages WHERE session = ?').pluck();
  const upsertCorrespondent = db.prepare(
    `INSERT INTO correspondents (session, jid, first_at, last_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session, jid) DO UPDATE SET last_at = excluded.last_at`,
  );
  /** correspondents written recently: their last_at is refreshed at most once a minute */
  const recentlyRecorded = new Map<string, number>();
  const hasCorrespondent = db.prepare('SELECT 1 FROM correspondents WHERE session = ? AND jid = ?').pluck();

  // positional parameters: binding fourteen named ones costs a third of the insert
  const insertOne = (m: NewMessage) =>
    insert.run(
      m.session, m.chatId, m.id, m.sender, m.fromMe ? 1 : 0, m.type, m.text, m.mediaId, m.quotedId, m.status,
      sealed(m.secret, m, 'secret'), m.extra ? JSON.stringify(m.extra) : null, sealed(m.raw, m, 'raw'), m.timestamp,
    );
  const insertMany = db.transaction((batch: NewMessage[]) => {
    for (const message of batch) insertOne(message);
  });

  return {
    insert(message: NewMessage): void {
      insertOne(message);
    },
    /** a history sync: every message in one transaction */
    insertMany(batch: NewMessage[]): void {
      insertMany(batch);
    },
    /** by id alone (routes that only name the message); chatId narrows when given */
    find(session: string, id: string, chatId?: string): MessageRow | undefined {
      const raw = (chatId ? byChatAndId.get(session, chatId, id) : byId.get(session, id)) as RawMessage | undefined;
      return raw && toRow(raw);
    },
    /** Moves a message's status forward; false when it is unknown or already there. */
    advanceStatus(session: string, chatId: string, id: string, status: DeliveryStatus): boolean {
      return advance.run(status, session, id, chatId, STATUS_RANK[status]).changes > 0;
    },
    exists: (session: string, chatId: string, id: string): boolean => byChatAndId.get(session, chatId, id) !== undefined,
    /** whether a message of this id is stored, in any chat (its sealed columns are not opened) */
    existsById: (session: string, id: string): boolean => byId.get(session, id) !== undefined,
    setText: (session: string, chatId: string, id: string, text: string) => setText.run(text, session, chatId, id).changes > 0,
    markRevoked: (session: string, chatId: string, id: string) => setRevoked.run(session, chatId, id).changes > 0,
    setStarred: (session: string, chatId: string, id: string, starred: boolean) => setStarred.run(starred ? 1 : 0, session, chatId, id).changes > 0,
    setMedia: (session: string, chatId: string, id: string, mediaId: string) => void setMedia.run(mediaId, session, chatId, id),
    pruneOlderThan: (cutoffMs: number): number => prune.run(cutoffMs).changes,
    /** the session's messages, newest first, with the count of all it holds */
    recent(session: string, limit: number, offset: number): { rows: MessageRow[]; total: number } {
      const rows = (recentPage.all(session, limit, offset) as RawMessage[]).map(toRow);
      return { rows, total: countOf.get(session) as number };
    },
    recordCorrespondent(session: string, jid: string, at: number): void {
      const key = `${session}\u0000${jid}`;
      const last = recentlyRecorded.get(key);
      if (last !== undefined && at - last < 60_000) return;
      if (recentlyRecorded.size >= 100_000) recentlyRecorded.clear();
      recentlyRecorded.set(key, at);
      upsertCorrespondent.run(session, jid, at, at);
    },
    hasCorrespondent: (session: string, jid: string): boolean => hasCorrespondent.get(session, jid) !== undefined,
  };
}
