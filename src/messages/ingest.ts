// What happens to message events from the engines before they are published: stored, media recorded, acks applied.
import type { EngineEventProcessor } from '../sessions/manager.js';
import type { MessagePayload } from '../engine/payloads.js';
import { jidKind } from '../engine/jid.js';
import type { DeliveryStatus, MessageType } from '../engine/types.js';
import type { MediaRecords } from '../media/records.js';
import type { MessagesRepo, NewMessage } from '../store/messages.js';

export function createMessageIngest(messages: MessagesRepo, media: MediaRecords): EngineEventProcessor {
  return function ingestMessageEvent(session, type, payload) {
    switch (type) {
      case 'message.received':
        storeReceived(session, payload as unknown as MessagePayload);
        return;
      case 'history.sync': {
        // the engine hands over every message; the stored copies stay here, the event carries a summary
        const synced = (payload.messages as MessagePayload[] | undefined) ?? [];
        // history media gets its record (the engine's reference only): nothing is fetched until it is downloaded
        // (a message already stored, e.g. received live, keeps the record it has)
        for (const message of synced) if (message.media && !messages.exists(session, message.chatId, message.messageId)) attachMedia(session, message);
        messages.insertMany(synced.map((m) => rowOf(session, m)));
        delete payload.messages;
        payload.messageCount = synced.length;
        payload.chatCount = new Set(synced.map((m) => m.chatId)).size;
        return;
      }
      case 'message.ack': {
        const { chatId, messageId, status } = payload as { chatId: string; messageId: string; status: DeliveryStatus };
        // an ack that moves nothing forward for a message we know is a repeat: dropped
        if (!messages.advanceStatus(session, chatId, messageId, status) && messages.exists(session, chatId, messageId)) return false;
        return;
      }
      case 'message.edited': {
        const { chatId, messageId, text } = payload as { chatId: string; messageId: string; text: string };
        messages.setText(session, chatId, messageId, text);
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
