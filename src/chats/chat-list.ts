// The chat list of a session (GET /api/sessions/{session}/chats): each chat with its name, last message, unread count,
// state and labels, by last activity, a page at a time after a cursor; and the chat actions (archive, pin, mute, read and
// their opposites), which go to the network first and then show in the list.
import { jidKind, normalizeJid } from '../engine/jid.js';
import { GatewayError, notFound, ValidationError } from '../errors.js';
import type { ChatStateChange, LastMessage, MessageRef } from '../engine/types.js';
import type { SessionManager } from '../sessions/manager.js';
import type { ChatCursor, ChatFilter, ChatRow, ChatsRepo } from '../store/chats.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { IdentitiesRepo } from '../store/identities.js';
import { chatJid } from './ids.js';
import { storedChatOf } from './stored-chat.js';

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

/** A chat action of the API (POST …/chats/{chatId}/{action}). */
export type ChatAction = ChatStateChange['action'];
export const CHAT_ACTIONS: readonly ChatAction[] = ['archive', 'unarchive', 'pin', 'unpin', 'mute', 'unmute', 'read', 'unread'];

/** WhatsApp keeps at most this many chats pinned. */
export const MAX_PINNED_CHATS = 3;
/** a mute without an end or a duration lasts 8 hours, WhatsApp's first choice */
export const DEFAULT_MUTE_SECONDS = 8 * 3600;

/** How long a mute lasts: for `duration` seconds, until a time, or for good; none of them: DEFAULT_MUTE_SECONDS. */
export interface MuteInput {
  duration?: number;
  until?: string;
  forever?: boolean;
}

export class ChatList {
  constructor(
    private readonly deps: {
      sessions: Pick<SessionManager, 'get' | 'connected'>;
      chats: ChatsRepo;
      contacts: Pick<ContactsRepo, 'findByLid'>;
      identities?: Pick<IdentitiesRepo, 'find'>;
      /** a stored message (the chat's newest, which archive and read changes name) */
      lookupMessage(session: string, id: string, chatId?: string): Promise<MessageRef | undefined>;
    },
  ) {}

  async list(session: string, filter: ChatFilter, cursor: string | undefined, limit: number): Promise<{ chats: ChatView[]; nextCursor: string | null }> {
    await this.deps.sessions.get(session);
    const after = cursor === undefined ? undefined : parseCursor(cursor);
    const rows = await this.deps.chats.page(session, filter, after, limit);
    const last = rows.at(-1);
    return { chats: rows.map(viewOf), nextCursor: rows.length === limit && last ? `${last.lastAt}:${last.chatId}` : null };
  }

  async get(session: string, chatId: string): Promise<ChatView> {
    await this.deps.sessions.get(session);
    return viewOf(await this.row(session, await this.jidOf(session, chatId)));
  }

  /**
   * A chat action: checked (the chat is in the list; at most MAX_PINNED_CHATS pinned), sent to the network, then
   * written to the list, which the answer shows. The network's echo (a chat.* event) writes the same state again.
   */
  async act(session: string, chatId: string, action: ChatAction, mute: MuteInput = {}): Promise<ChatView> {
    await this.deps.sessions.get(session);
    // a person or a group: status posts and channels have no place in the chat list's state
    const jid = await this.jidOf(session, chatJid(chatId, '/chatId'));
    const change: ChatStateChange = action === 'mute' ? { action, until: muteUntil(mute) } : { action };
    const engine = await this.deps.sessions.connected(session);
    const row = await this.row(session, jid);
    if (action === 'pin' && row.pinnedAt === null && (await this.deps.chats.pinnedOther(session, jid)) >= MAX_PINNED_CHATS) {
      throw new GatewayError('LIMIT_REACHED', `${MAX_PINNED_CHATS} chats are pinned already, the most WhatsApp allows; unpin one first`);
    }
    await engine.changeChat(jid, change, await this.lastMessage(session, row));
    const { chats } = this.deps;
    switch (change.action) {
      case 'archive':
      case 'unarchive':
        chats.archive(session, jid, change.action === 'archive');
        break;
      case 'pin':
      case 'unpin':
        chats.pin(session, jid, change.action === 'pin' ? (row.pinnedAt ?? Date.now()) : null);
        break;
      case 'mute':
        chats.mute(session, jid, change.until);
        break;
      case 'unmute':
        chats.mute(session, jid, null);
        break;
      case 'read':
      case 'unread':
        chats.read(session, jid, change.action === 'read');
        break;
    }
    return viewOf(await this.row(session, jid));
  }

  /** The chat's JID: a phone number, JID or LID (a LID whose number the session knows: see storedChatOf). */
  private async jidOf(session: string, chatId: string): Promise<string> {
    const jid = normalizeJid(chatId);
    if (!jid) throw ValidationError.field('/chatId', 'is not a chat (a phone number, JID, LID, group or channel)');
    return storedChatOf(this.deps, session, jid);
  }

  private async row(session: string, jid: string): Promise<ChatRow> {
    const row = await this.deps.chats.get(session, jid);
    if (!row) throw notFound('CHAT_NOT_FOUND', `chat ${jid}`);
    return row;
  }

  private async lastMessage(session: string, row: ChatRow): Promise<LastMessage | undefined> {
    if (row.lastMessageId === null) return undefined;
    const ref = await this.deps.lookupMessage(session, row.lastMessageId, row.chatId);
    return ref && { ...ref, timestamp: row.lastAt };
  }
}

/** The end of a mute, ms (-1: for good); a time that is not in the future is a 400. */
function muteUntil(input: MuteInput): number {
  const given = [input.duration !== undefined, input.until !== undefined, input.forever === true].filter(Boolean).length;
  if (given > 1) throw ValidationError.field('/duration', 'give one of duration, until and forever');
  if (input.forever) return -1;
  if (input.until !== undefined) {
    const until = Date.parse(input.until);
    if (!(until > Date.now())) throw ValidationError.field('/until', 'must be a time in the future');
    return until;
  }
  return Date.now() + (input.duration ?? DEFAULT_MUTE_SECONDS) * 1000;
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
    name: row.contactName ?? row.name ?? phoneNumber,
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
