// Repository of the chat list: a session's chats by last activity with their last message and state (the triggers of
// migration 018 keep them current from the messages table), the contact names they show, and their labels.
import type { Db } from './db.js';
import type { SyncedChat } from '../engine/types.js';

export type { SyncedChat };

export interface ChatRow {
  chatId: string;
  lastMessageId: string | null;
  lastType: string | null;
  lastText: string | null;
  lastFromMe: boolean | null;
  lastStatus: string | null;
  /** ms; 0 when the chat has no stored message */
  lastAt: number;
  unread: number;
  archived: boolean;
  /** ms, or null when not pinned */
  pinnedAt: number | null;
  /** ms; -1 for good; null when not muted */
  muteUntil: number | null;
  /** the contact's saved name, WhatsApp name or business name, when the session knows the chat as a contact */
  contactName: string | null;
  /** the chat's own name: a group's subject, or the name a history sync gave it */
  name: string | null;
  phoneNumber: string | null;
  /** a person's chat: the other id of the pair the session learnt (the LID of a phone JID chat, the number of a LID chat) */
  pairLid: string | null;
  pairPn: string | null;
  labels: string[];
}

export interface ChatFilter {
  unread?: boolean;
  archived?: boolean;
  groups?: boolean;
  label?: string;
}

/** where a page starts: after the chat with this last activity and id (the list's order) */
export interface ChatCursor {
  lastAt: number;
  chatId: string;
}

interface RawChat {
  chat_id: string;
  last_message_id: string | null;
  last_type: string | null;
  last_text: string | null;
  last_from_me: number | null;
  last_status: string | null;
  last_at: number | string;
  unread: number;
  archived: number;
  pinned_at: number | string | null;
  mute_until: number | string | null;
  contact_name: string | null;
  name: string | null;
  phone_number: string | null;
  pair_lid: string | null;
  pair_pn: string | null;
}

const toRow = (r: RawChat, labels: string[]): ChatRow => ({
  chatId: r.chat_id,
  lastMessageId: r.last_message_id,
  lastType: r.last_type,
  lastText: r.last_text,
  lastFromMe: r.last_from_me === null ? null : r.last_from_me === 1,
  lastStatus: r.last_status,
  lastAt: Number(r.last_at),
  unread: r.unread,
  archived: r.archived === 1,
  pinnedAt: r.pinned_at === null ? null : Number(r.pinned_at),
  muteUntil: r.mute_until === null ? null : Number(r.mute_until),
  contactName: r.contact_name,
  name: r.name,
  phoneNumber: r.phone_number,
  pairLid: r.pair_lid,
  pairPn: r.pair_pn,
  labels,
});

export type ChatsRepo = ReturnType<typeof createChatsRepo>;

const COLUMNS = `c.chat_id, c.last_message_id, c.last_type, c.last_text, c.last_from_me, c.last_status, c.last_at, c.unread, c.archived,
  c.pinned_at, c.mute_until, c.name, COALESCE(k.saved_name, k.name, k.business_name) AS contact_name, k.phone_number, ip.lid AS pair_lid, il.pn AS pair_pn`;
/** the contact a chat is, and the phone number ↔ LID pair the session learnt for it (by its phone JID, or by its LID) */
const JOINS = `LEFT JOIN contacts k ON k.session = c.session AND k.jid = c.chat_id
  LEFT JOIN identities ip ON ip.session = c.session AND ip.pn = c.chat_id
  LEFT JOIN identities il ON il.session = c.session AND il.lid = c.chat_id`;

export function createChatsRepo(db: Db) {
  // one statement for every filter: a filter left out is NULL and holds for every row; the cursor likewise (the casts
  // give PostgreSQL the parameters' types)
  const page = db.prepare(
    `SELECT ${COLUMNS} FROM chats c ${JOINS}
     WHERE c.session = ?
       AND (CAST(? AS BIGINT) IS NULL OR c.last_at < CAST(? AS BIGINT) OR (c.last_at = CAST(? AS BIGINT) AND c.chat_id < CAST(? AS TEXT)))
       AND (CAST(? AS INTEGER) IS NULL OR (CASE WHEN c.unread <> 0 THEN 1 ELSE 0 END) = CAST(? AS INTEGER))
       AND (CAST(? AS INTEGER) IS NULL OR c.archived = CAST(? AS INTEGER))
       AND (CAST(? AS INTEGER) IS NULL OR (CASE WHEN c.chat_id LIKE '%@g.us' THEN 1 ELSE 0 END) = CAST(? AS INTEGER))
       AND (CAST(? AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM label_chats l WHERE l.session = c.session AND l.label_id = CAST(? AS TEXT) AND l.chat_id = c.chat_id))
     ORDER BY c.last_at DESC, c.chat_id DESC LIMIT ?`,
  );
  const one = db.prepare(`SELECT ${COLUMNS} FROM chats c ${JOINS} WHERE c.session = ? AND c.chat_id = ?`);
  const labelsOf = db.prepare('SELECT label_id FROM label_chats WHERE session = ? AND chat_id = ? ORDER BY label_id').pluck();
  const ensure = db.prepare('INSERT INTO chats (session, chat_id) VALUES (?, ?) ON CONFLICT (session, chat_id) DO NOTHING');
  const setArchived = db.prepare('UPDATE chats SET archived = ? WHERE session = ? AND chat_id = ?');
  const setMute = db.prepare('UPDATE chats SET mute_until = ? WHERE session = ? AND chat_id = ?');
  const markRead = db.prepare('UPDATE chats SET unread = 0, read_at = CASE WHEN last_at > read_at THEN last_at ELSE read_at END WHERE session = ? AND chat_id = ?');
  const markUnread = db.prepare('UPDATE chats SET unread = CASE WHEN unread = 0 THEN 1 ELSE unread END WHERE session = ? AND chat_id = ?');
  const setPinned = db.prepare('UPDATE chats SET pinned_at = ? WHERE session = ? AND chat_id = ?');
  const setName = db.prepare('UPDATE chats SET name = ? WHERE session = ? AND chat_id = ?');
  const pinnedCount = db.prepare('SELECT COUNT(*) FROM chats WHERE session = ? AND pinned_at IS NOT NULL AND chat_id <> ?').pluck();
  // a history sync's state of a chat: what it carries replaces the row's (a field left out is NULL and keeps it); its
  // unread count is the phone's, and what it counts as read goes up to the chat's newest message
  const synced = db.prepare(
    `UPDATE chats SET
       name = COALESCE(CAST(? AS TEXT), name),
       archived = COALESCE(CAST(? AS INTEGER), archived),
       pinned_at = CASE WHEN CAST(? AS INTEGER) = 1 THEN CAST(? AS BIGINT) ELSE pinned_at END,
       mute_until = CASE WHEN CAST(? AS INTEGER) = 1 THEN CAST(? AS BIGINT) ELSE mute_until END,
       unread = COALESCE(CAST(? AS INTEGER), unread),
       read_at = CASE WHEN CAST(? AS INTEGER) IS NULL THEN read_at WHEN last_at > read_at THEN last_at ELSE read_at END,
       last_at = CASE WHEN last_message_id IS NULL AND CAST(? AS BIGINT) > last_at THEN CAST(? AS BIGINT) ELSE last_at END
     WHERE session = ? AND chat_id = ?`,
  );
  const remove = db.prepare('DELETE FROM chats WHERE session = ? AND chat_id = ?');
  const clear = db.prepare('DELETE FROM chats WHERE session = ?');
  const bool = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);

  const withLabels = async (session: string, rows: RawChat[]) =>
    Promise.all(rows.map(async (r) => toRow(r, (await labelsOf.all(session, r.chat_id)) as string[])));
  /** staged state changes (into the open tick, joined here): the row is made first when the chat has no message stored yet */
  const change = (session: string, chatId: string, write: () => void) => {
    db.tick?.join();
    ensure.stage(session, chatId);
    write();
  };

  return {
    async page(session: string, filter: ChatFilter, after: ChatCursor | undefined, limit: number): Promise<ChatRow[]> {
      const at = after?.lastAt ?? null;
      const unread = bool(filter.unread);
      const archived = bool(filter.archived);
      const groups = bool(filter.groups);
      const label = filter.label ?? null;
      const rows = (await page.all(session, at, at, at, after?.chatId ?? null, unread, unread, archived, archived, groups, groups, label, label, limit)) as RawChat[];
      return withLabels(session, rows);
    },
    async get(session: string, chatId: string): Promise<ChatRow | undefined> {
      const raw = (await one.get(session, chatId)) as RawChat | undefined;
      return raw && (await withLabels(session, [raw]))[0];
    },
    /** chat events (staged into the open tick) */
    archive: (session: string, chatId: string, archived: boolean) => change(session, chatId, () => setArchived.stage(archived ? 1 : 0, session, chatId)),
    mute: (session: string, chatId: string, until: number | null) => change(session, chatId, () => setMute.stage(until, session, chatId)),
    read: (session: string, chatId: string, read: boolean) => change(session, chatId, () => (read ? markRead : markUnread).stage(session, chatId)),
    /** at: ms when it was pinned; null unpins */
    pin: (session: string, chatId: string, at: number | null) => change(session, chatId, () => setPinned.stage(at, session, chatId)),
    /** the chat's own name (a group's subject) */
    rename: (session: string, chatId: string, name: string) => change(session, chatId, () => setName.stage(name, session, chatId)),
    /** the chats of a history sync (staged) */
    sync(session: string, chats: SyncedChat[]): void {
      for (const c of chats) {
        const unread = c.unreadCount === undefined && c.markedUnread === undefined ? null : Math.max(0, c.unreadCount ?? 0) || (c.markedUnread ? 1 : 0);
        const lastAt = c.lastAt ?? null;
        change(session, c.chatId, () =>
          synced.stage(
            c.name ?? null,
            c.archived === undefined ? null : c.archived ? 1 : 0,
            c.pinnedAt === undefined ? 0 : 1,
            c.pinnedAt ?? null,
            c.muteUntil === undefined ? 0 : 1,
            c.muteUntil ?? null,
            unread,
            unread,
            lastAt,
            lastAt,
            session,
            c.chatId,
          ),
        );
      }
    },
    /** how many other chats of the session are pinned */
    async pinnedOther(session: string, chatId: string): Promise<number> {
      return Number(await pinnedCount.get(session, chatId));
    },
    remove: (session: string, chatId: string) => remove.stage(session, chatId),
    async clear(session: string): Promise<void> {
      await clear.run(session);
    },
  };
}
