// The chat list of a session (GET /api/sessions/{session}/chats): each chat with its name, last message, unread count,
// state and labels, by last activity, a page at a time after a cursor.
import { jidKind, normalizeJid } from '../engine/jid.js';
import { notFound, ValidationError } from '../errors.js';
import type { SessionManager } from '../sessions/manager.js';
import type { ChatCursor, ChatFilter, ChatRow, ChatsRepo } from '../store/chats.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { IdentitiesRepo } from '../store/identities.js';

export interface ChatView {
  chatId: string;
  /** the contact's name, else the phone number; null for a group or channel whose name the gateway has not stored */
  name: string | null;
  isGroup: boolean;
  phoneNumber: string | null;
  /** a person's LID, when the gateway knows it */
  lid: string | null;
  lastMessage: { messageId: string; type: string; text: string | null; timestamp: string; fromMe: boolean; status: string } | null;
  unreadCount: number;
  archived: boolean;
  pinned: boolean;
  muted: boolean;
  /** null: not muted, or muted for good */
  muteEndTime: string | null;
  labels: string[];
}

export class ChatList {
  constructor(private readonly deps: { sessions: Pick<SessionManager, 'get'>; chats: ChatsRepo; contacts: Pick<ContactsRepo, 'findByLid'>; identities?: Pick<IdentitiesRepo, 'find'> }) {}

  async list(session: string, filter: ChatFilter, cursor: string | undefined, limit: number): Promise<{ chats: ChatView[]; nextCursor: string | null }> {
    await this.deps.sessions.get(session);
    const after = cursor === undefined ? undefined : parseCursor(cursor);
    const rows = await this.deps.chats.page(session, filter, after, limit);
    const last = rows.at(-1);
    return { chats: rows.map(viewOf), nextCursor: rows.length === limit && last ? `${last.lastAt}:${last.chatId}` : null };
  }

  async get(session: string, chatId: string): Promise<ChatView> {
    await this.deps.sessions.get(session);
    let jid = normalizeJid(chatId);
    if (!jid) throw ValidationError.field('/chatId', 'is not a chat');
    // a LID the session knows as a contact, or whose number it learnt, is the chat under its phone number
    if (jidKind(jid) === 'lid') jid = (await this.deps.contacts.findByLid(session, jid))?.jid ?? (await this.deps.identities?.find(session, jid))?.pn ?? jid;
    const row = await this.deps.chats.get(session, jid);
    if (!row) throw notFound('NOT_FOUND', `chat ${jid}`);
    return viewOf(row);
  }
}

function parseCursor(cursor: string): ChatCursor {
  const colon = cursor.indexOf(':');
  const lastAt = Number(cursor.slice(0, colon));
  if (colon < 1 || !Number.isSafeInteger(lastAt) || colon === cursor.length - 1) throw ValidationError.field('/cursor', 'is not a cursor this list gave (nextCursor)');
  return { lastAt, chatId: cursor.slice(colon + 1) };
}

function viewOf(row: ChatRow): ChatView {
  const kind = jidKind(row.chatId);
  const phoneNumber = row.phoneNumber ?? (kind === 'user' ? `+${row.chatId.split('@')[0]!.split(':')[0]}` : row.pairPn ? `+${row.pairPn.split('@')[0]}` : null);
  const lid = kind === 'lid' ? row.chatId : kind === 'user' ? row.pairLid : null;
  const muted = row.muteUntil !== null && (row.muteUntil === -1 || row.muteUntil > Date.now());
  return {
    chatId: row.chatId,
    name: row.contactName ?? phoneNumber,
    isGroup: kind === 'group',
    phoneNumber,
    lid,
    lastMessage:
      row.lastMessageId === null
        ? null
        : {
            messageId: row.lastMessageId,
            type: row.lastType ?? 'unknown',
            text: row.lastText,
            timestamp: new Date(row.lastAt).toISOString(),
            fromMe: row.lastFromMe === true,
            status: row.lastStatus ?? 'received',
          },
    unreadCount: Math.max(0, row.unread),
    archived: row.archived,
    pinned: row.pinnedAt !== null,
    muted,
    muteEndTime: muted && row.muteUntil !== -1 ? new Date(row.muteUntil!).toISOString() : null,
    labels: row.labels,
  };
}
