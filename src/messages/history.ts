// A chat's history and search over a session's messages (issue 30): pages of a chat's stored messages before or after
// a point (a cursor, a time or a message), one message by id, and full-text search with a snippet of each match.
import { normalizeJid } from '../engine/jid.js';
import { notFound, ValidationError } from '../errors.js';
import { mediaView, type MediaView } from '../media/records.js';
import type { SessionManager } from '../sessions/manager.js';
import { storedChatOf } from '../chats/stored-chat.js';
import type { ChatsRepo } from '../store/chats.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { MediaRepo } from '../store/media.js';
import type { ActivityRow, MessageActivityRepo } from '../store/message-activity.js';
import type { MessageRow, MessagesRepo } from '../store/messages.js';
import { storedMessageView, type StoredMessage } from './service.js';
import { nameSenders, type PairFinder } from './people.js';

/** a point in a chat's history: a time (ms), and a message id that orders messages of the same time */
interface Point {
  at: number;
  id: string;
}

/** words a search looks for at most; each at most this long */
const MAX_WORDS = 10;
const MAX_WORD = 64;
const SNIPPET_AROUND = 60;

/** A stored message with everything that happened to it since, and its media record. */
export interface MessageDetail extends StoredMessage {
  /** each status the message reached, first time, and who gave it (a group's members each ack); null: not named */
  acks: Array<{ status: string; at: string; by: string | null }>;
  /** a sent message's way, oldest first: pending (sent off), then each status the first time it was reached, and each failure */
  statusHistory: Array<{ status: string; at: string; reason?: string; code?: string; detail?: string }>;
  /** the newest failure of a sent message (it may have moved on since: `status` says where it is); null when none */
  failure: { reason: string; code?: string; detail?: string; at: string } | null;
  /** the current reaction of each person (a removed one is gone) */
  reactions: Array<{ from: string; emoji: string; at: string }>;
  /** a poll's current vote of each person */
  votes: Array<{ voter: string; selectedOptions: string[]; at: string }>;
  /** every edit, oldest first (`text` is the newest) */
  edits: Array<{ text: string; at: string }>;
  media: MediaView | null;
  /** a poll's question and options, a location, a contact card: what the message carried besides its text */
  poll?: unknown;
  location?: unknown;
  vcard?: unknown;
}

export interface HistoryPage {
  /** oldest first */
  messages: MessageDetail[];
  /** the `before` of the page of older messages; null when this page has none older */
  nextBefore: string | null;
  /** the `after` of the page of newer messages */
  nextAfter: string | null;
}

export class MessageHistory {
  constructor(
    private readonly deps: {
      sessions: Pick<SessionManager, 'get'>;
      messages: MessagesRepo;
      activity: Pick<MessageActivityRepo, 'of'>;
      media: Pick<MediaRepo, 'get'>;
      contacts: Pick<ContactsRepo, 'findByLid'>;
      identities?: PairFinder;
      chats: Pick<ChatsRepo, 'get'>;
    },
  ) {}

  async page(session: string, chat: string, where: { before?: string; after?: string }, limit: number): Promise<HistoryPage> {
    await this.deps.sessions.get(session);
    if (where.before !== undefined && where.after !== undefined) throw ValidationError.field('/after', 'give before or after, not both');
    const chatId = await this.chatOf(session, chat);
    const before = where.before === undefined ? undefined : await this.pointOf(session, chatId, where.before, '/before');
    const after = where.after === undefined ? undefined : await this.pointOf(session, chatId, where.after, '/after');
    const rows = await this.deps.messages.chatPage(session, chatId, { before, after }, limit);
    if (!after) rows.reverse();
    const full = rows.length === limit;
    const oldest = rows[0];
    const newest = rows.at(-1);
    return {
      messages: await this.detailed(session, rows),
      nextBefore: oldest && (after || full) ? cursorOf(oldest.timestamp, oldest.id) : null,
      nextAfter: newest ? cursorOf(newest.timestamp, newest.id) : (where.after ?? null),
    };
  }

  async get(session: string, messageId: string): Promise<MessageDetail> {
    await this.deps.sessions.get(session);
    const row = await this.deps.messages.find(session, messageId);
    if (!row) throw notFound('MESSAGE_NOT_FOUND', `message ${messageId}`);
    return (await this.detailed(session, [row]))[0]!;
  }

  async search(session: string, query: string, chat: string | undefined, limit: number): Promise<Array<{ message: MessageDetail; snippet: string }>> {
    await this.deps.sessions.get(session);
    // without diacritics, as the index has them; a word ending in * is a prefix
    const plain = query.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
    const words = (plain.match(/[\p{L}\p{N}]+\*?/gu) ?? []).slice(0, MAX_WORDS).map((token) => {
      const prefix = token.endsWith('*');
      return { word: (prefix ? token.slice(0, -1) : token).slice(0, MAX_WORD), prefix };
    });
    if (words.length === 0) throw ValidationError.field('/q', 'has no word to look for (letters or digits)');
    const chatId = chat === undefined ? undefined : await this.chatOf(session, chat);
    const rows = await this.deps.messages.search(session, words, chatId, limit);
    const details = await this.detailed(session, rows);
    return details.map((message, i) => ({ message, snippet: snippetOf(rows[i]!.text ?? '', words.map((w) => w.word)) }));
  }

  /** the messages' views with their activity (a query per chat among them) and media records, in the same order */
  private async detailed(session: string, rows: MessageRow[]): Promise<MessageDetail[]> {
    const byChat = new Map<string, string[]>();
    for (const row of rows) byChat.set(row.chatId, [...(byChat.get(row.chatId) ?? []), row.id]);
    const activity = new Map<string, ActivityRow[]>();
    for (const [chatId, ids] of byChat) {
      for (const entry of await this.deps.activity.of(session, chatId, ids)) {
        const key = `${entry.chatId}\u0000${entry.messageId}`;
        activity.set(key, [...(activity.get(key) ?? []), entry]);
      }
    }
    const media = await Promise.all(rows.map((row) => (row.mediaId ? this.deps.media.get(row.mediaId) : undefined)));
    const views = await nameSenders(this.deps.identities, session, rows.map(storedMessageView));
    return rows.map((row, i) => detailOf(row, views[i]!, activity.get(`${row.chatId}\u0000${row.id}`) ?? [], media[i]));
  }

  private async chatOf(session: string, chat: string): Promise<string> {
    const jid = normalizeJid(chat);
    if (!jid) throw ValidationError.field('/chatId', 'is not a chat');
    return storedChatOf(this.deps, session, jid);
  }

  /** `ms:id` (a cursor this route gave), a time (ISO 8601), or a message of the chat */
  private async pointOf(session: string, chatId: string, text: string, field: string): Promise<Point> {
    const cursor = /^(\d{1,15}):(.+)$/.exec(text);
    if (cursor) return { at: Number(cursor[1]), id: cursor[2]! };
    if (/^\d{4}-\d\d-\d\dT/.test(text)) {
      const at = Date.parse(text);
      if (Number.isNaN(at)) throw ValidationError.field(field, 'is not a valid time');
      return { at, id: '' };
    }
    const row = await this.deps.messages.find(session, text, chatId);
    if (!row) throw notFound('MESSAGE_NOT_FOUND', `message ${text} in ${chatId}`);
    return { at: row.timestamp, id: row.id };
  }
}

const cursorOf = (at: number, id: string) => `${at}:${id}`;

function withoutS3Url({ s3Url: _s3Url, ...record }: MediaView): MediaView {
  return record;
}

const ACK_KINDS = new Set(['sent', 'delivered', 'read']);
const iso = (ms: number) => new Date(ms).toISOString();

function detailOf(row: MessageRow, view: StoredMessage, activity: ActivityRow[], media: Awaited<ReturnType<MediaRepo['get']>>): MessageDetail {
  const detail: MessageDetail = {
    ...view,
    acks: [],
    statusHistory: [],
    failure: null,
    reactions: [],
    votes: [],
    edits: [],
    // without its S3 address: that is the media routes' to give (scope media:read), and may be a public link
    media: media && media.session === row.session ? withoutS3Url(mediaView(media)) : null,
  };
  for (const field of ['poll', 'location', 'vcard'] as const) if (row.extra?.[field] !== undefined) detail[field] = row.extra[field];
  // a message sent and acked at once was sent at its time: that ack is not written again
  const ackedAtOnce = row.fromMe && row.status !== 'pending' && !activity.some((entry) => entry.kind === 'sent' || entry.kind === 'failed');
  if (ackedAtOnce) detail.acks.push({ status: 'sent', at: iso(row.timestamp), by: null });
  if (row.fromMe) detail.statusHistory.push({ status: 'pending', at: iso(row.timestamp) }, ...(ackedAtOnce ? [{ status: 'sent', at: iso(row.timestamp) }] : []));
  const reached = new Set<string>();
  for (const entry of activity) {
    if (ACK_KINDS.has(entry.kind) && !reached.has(entry.kind)) {
      reached.add(entry.kind);
      detail.statusHistory.push({ status: entry.kind, at: iso(entry.at) });
    }
    if (entry.kind === 'failed') {
      const { code, detail: words } = JSON.parse(entry.value ?? '{}') as { code?: string; detail?: string };
      const failure = { reason: entry.actor, ...(code ? { code } : {}), ...(words ? { detail: words } : {}) };
      detail.statusHistory.push({ status: 'failed', at: iso(entry.at), ...failure });
      detail.failure = { ...failure, at: iso(entry.at) };
    } else if (ACK_KINDS.has(entry.kind)) detail.acks.push({ status: entry.kind, at: iso(entry.at), by: entry.actor || null });
    else if (entry.kind === 'reaction' && entry.value) detail.reactions.push({ from: entry.actor, emoji: entry.value, at: iso(entry.at) });
    else if (entry.kind === 'vote') detail.votes.push({ voter: entry.actor, selectedOptions: JSON.parse(entry.value ?? '[]') as string[], at: iso(entry.at) });
    else if (entry.kind === 'edit' && entry.value !== null) detail.edits.push({ text: entry.value, at: iso(entry.at) });
  }
  return detail;
}

/** the text around the first word found, with … where it was cut */
function snippetOf(text: string, words: readonly string[]): string {
  const lower = text.toLowerCase();
  const found = words.map((word) => lower.indexOf(word)).filter((i) => i >= 0);
  const at = found.length ? Math.min(...found) : 0;
  const start = Math.max(0, at - SNIPPET_AROUND);
  const end = Math.min(text.length, at + SNIPPET_AROUND * 2);
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}
