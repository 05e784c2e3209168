// What happens to message events from the engines before they are published: stored, media recorded, acks applied.
import type { EngineEventProcessor } from '../sessions/manager.js';
import type { MessagePayload } from '../engine/payloads.js';
import { jidKind } from '../engine/jid.js';
import type { DeliveryStatus, MessageType } from '../engine/types.js';
import type { MessageFailure } from '../engine/server-acks.js';
import type { MediaRecords } from '../media/records.js';
import type { MessageActivityRepo } from '../store/message-activity.js';
import { HISTORY_CHUNK, messageKey, type MessagesRepo, type NewMessage } from '../store/messages.js';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** who an event names: a JID reference's JID, '' when there is none */
type JidRef = { jid?: string } | undefined;
const actorOf = (ref: JidRef): string => ref?.jid ?? '';
const timeOf = (timestamp: unknown): number => Date.parse(String(timestamp)) || Date.now();

/** every edit is kept in the message's activity: its actor is its time */
export function keepEdit(activity: Pick<MessageActivityRepo, 'record'>, session: string, chatId: string, messageId: string, text: string, at: number): void {
  activity.record(session, { chatId, messageId, kind: 'edit', actor: String(at), value: text, at });
}

/** a failure is kept in the message's activity: its actor is its reason, its value the code and detail */
export function keepFailure(activity: Pick<MessageActivityRepo, 'record'>, session: string, chatId: string, messageId: string, failure: MessageFailure, at: number): void {
  const value = failure.code || failure.detail ? JSON.stringify({ ...(failure.code ? { code: failure.code } : {}), ...(failure.detail ? { detail: failure.detail } : {}) }) : null;
  activity.record(session, { chatId, messageId, kind: 'failed', actor: failure.reason, value, at });
}

export function createMessageIngest(messages: MessagesRepo, media: MediaRecords, activity: Pick<MessageActivityRepo, 'record'>): EngineEventProcessor {
  // synchronous for the events of every message (their writes are staged in the tick the first processor joined);
  // a promise for those that must read first, which holds the session's later events back until it settles
  return function ingestMessageEvent(session, type, payload) {
    switch (type) {
      case 'message.received':
        storeReceived(session, payload as unknown as MessagePayload);
        return;
      case 'history.sync':
        return storeHistory(session, payload);
      case 'message.ack': {
        const { chatId, messageId, status, by, timestamp } = payload as { chatId: string; messageId: string; status: DeliveryStatus; by?: JidRef; timestamp: string };
        if (status !== 'pending') activity.record(session, { chatId, messageId, kind: status, actor: actorOf(by), value: null, at: timeOf(timestamp) });
        return applyAck(session, chatId, messageId, status);
      }
      case 'message.failed': {
        const { chatId, messageId, reason, code, detail, timestamp } = payload as unknown as { chatId: string; messageId: string; timestamp: string } & MessageFailure;
        keepFailure(activity, session, chatId, messageId, { reason, ...(code ? { code } : {}), ...(detail ? { detail } : {}) }, timeOf(timestamp));
        messages.markFailed(session, chatId, messageId);
        return;
      }
      case 'message.edited': {
        const { chatId, messageId, text, timestamp } = payload as { chatId: string; messageId: string; text: string; timestamp: string };
        messages.setText(session, chatId, messageId, text);
        keepEdit(activity, session, chatId, messageId, text, timeOf(timestamp));
        return;
      }
      case 'message.reaction': {
        const { chatId, messageId, from, reaction, timestamp } = payload as { chatId: string; messageId: string; from?: JidRef; reaction: string; timestamp: string };
        activity.record(session, { chatId, messageId, kind: 'reaction', actor: actorOf(from), value: reaction, at: timeOf(timestamp) });
        return;
      }
      case 'message.vote': {
        const { chatId, pollMessageId, voter, selectedOptions, timestamp } = payload as { chatId: string; pollMessageId: string; voter?: JidRef; selectedOptions: string[]; timestamp: string };
        activity.record(session, { chatId, messageId: pollMessageId, kind: 'vote', actor: actorOf(voter), value: JSON.stringify(selectedOptions), at: timeOf(timestamp) });
        return;
      }
      case 'message.revoked': {
        const { chatId, messageId } = payload as { chatId: string; messageId: string };
        messages.markRevoked(session, chatId, messageId);
        return;
      }
      default:
        return;
    }
  };

  /** An ack that moves nothing forward for a message we know is a repeat: dropped (false). */
  async function applyAck(session: string, chatId: string, messageId: string, status: DeliveryStatus): Promise<false | undefined> {
    if (!(await messages.advanceStatus(session, chatId, messageId, status)) && (await messages.exists(session, chatId, messageId))) return false;
    return undefined;
  }

  /**
   * The engine hands over every message (50,000 in a large account's first sync); the stored copies stay here, the event
   * carries a summary. They are written in chunks, each in its own tick, with a turn of the event loop between chunks, so
   * that requests and other sessions' events are not held up meanwhile. Settles once every chunk is committed (so the
   * event's commit wait, and with it the notification's receipt, covers the last one); rejects, without writing the
   * chunks after it, when a chunk could not be committed. A crash midway keeps the chunks committed: WhatsApp sends the
   * unconfirmed notification again, and the rows already stored are skipped (ON CONFLICT DO NOTHING).
   */
  async function storeHistory(session: string, payload: Record<string, unknown>): Promise<void> {
    const synced = (payload.messages as MessagePayload[] | undefined) ?? [];
    delete payload.messages;
    payload.messageCount = synced.length;
    // the chats the sync names (with or without messages in it) and those of its messages
    const chats = (payload.chats as Array<{ chatId: string }> | undefined) ?? [];
    payload.chatCount = new Set([...synced.map((m) => m.chatId), ...chats.map((c) => c.chatId)]).size;
    const onDemand = payload.syncType === 'ON_DEMAND';
    for (let start = 0; start < synced.length; start += HISTORY_CHUNK) {
      if (start > 0) await nextTurn();
      const chunk = synced.slice(start, start + HISTORY_CHUNK);
      // history media gets its record (the engine's reference only): nothing is fetched until it is downloaded
      // (a message already stored, e.g. received live, keeps the record it has)
      const withMedia = chunk.filter((m) => m.media);
      const stored = withMedia.length ? await messages.existsMany(session, withMedia.map((m) => m.messageId)) : undefined;
      // the chunk's media records and rows go into one tick, staged without a wait in between
      messages.beginWrite();
      for (const message of withMedia) if (!stored!.has(messageKey(message.chatId, message.messageId))) attachMedia(session, message);
      // a backfill's answer is older than what is stored: the chat's unread state stays as it was
      if (onDemand) await messages.insertOlderBatch(chunk.map((m) => rowOf(session, m)));
      else await messages.insertBatch(chunk.map((m) => rowOf(session, m)));
    }
  }

  /** Records the attachment of a message and puts its mediaId in its place. */
  function attachMedia(session: string, payload: MessagePayload): void {
    const { media: attachment } = payload;
    if (!attachment) return;
    delete payload.media;
    const row = media.record(session, payload.messageId, payload.chatId, attachment);
    payload.mediaId = row.id;
    payload.mimeType = row.mimeType;
    if (row.size !== null) payload.size = row.size;
    if (row.filename) payload.filename = row.filename;
  }

  function storeReceived(session: string, payload: MessagePayload): void {
    const at = Date.parse(payload.timestamp) || Date.now();
    attachMedia(session, payload);
    messages.insert(rowOf(session, payload));
    delete payload.raw;
    // a status post is not a message to the session: its author does not become someone it may answer
    if (!payload.fromMe && jidKind(payload.chatId) !== 'status') {
      // who may be answered in client-token "conversation" mode: the chat, and the author under each of its names
      for (const jid of new Set([payload.chatId, payload.from.jid, payload.from.lid].filter(Boolean) as string[])) {
        messages.recordCorrespondent(session, jid, at);
      }
      if (payload.from.phoneNumber) messages.recordCorrespondent(session, `${payload.from.phoneNumber.slice(1)}@s.whatsapp.net`, at);
    }
  }
}


function rowOf(session: string, payload: MessagePayload): NewMessage {
  return {
    session,
    chatId: payload.chatId,
    id: payload.messageId,
    sender: payload.fromMe ? null : payload.from.jid,
    fromMe: payload.fromMe,
    type: payload.type as MessageType,
    text: payload.text ?? payload.caption ?? null,
    mediaId: payload.mediaId ?? null,
    quotedId: payload.quotedMessageId ?? null,
    status: payload.fromMe ? (payload.status ?? 'sent') : 'received',
    secret: null,
    extra: extraOf(payload),
    raw: payload.raw === undefined ? null : JSON.stringify(payload.raw),
    timestamp: Date.parse(payload.timestamp) || Date.now(),
  };
}

export function extraOf(payload: Pick<MessagePayload, 'poll' | 'location' | 'vcard'>): Record<string, unknown> | null {
  if (payload.poll) return { poll: payload.poll };
  if (payload.location) return { location: payload.location };
  if (payload.vcard) return { vcard: payload.vcard };
  return null;
}
