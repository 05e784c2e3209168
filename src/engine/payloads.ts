// The normalised payloads engines emit for message events (docs/EVENTS.md documents each field).
import type { JidRef } from './jid.js';
import type { DeliveryStatus, LinkPreview, MediaAttachment, MessageStatus, MessageType, OutgoingContent } from './types.js';

export interface MessagePayload {
  messageId: string;
  chatId: string;
  /** the author; in 1:1 chats the contact (received) or the session (sent) */
  from: JidRef;
  fromMe: boolean;
  isGroup: boolean;
  type: MessageType;
  /** ISO 8601 */
  timestamp: string;
  text?: string;
  caption?: string;
  mediaId?: string;
  mimeType?: string;
  filename?: string;
  size?: number;
  /** S3 URL, when auto-persist saved the media */
  mediaUrl?: string;
  ptt?: boolean;
  quotedMessageId?: string;
  mentions?: string[];
  isForwarded?: boolean;
  poll?: { title: string; options: string[]; multiSelect: boolean };
  location?: { latitude: number; longitude: number; address?: string; name?: string };
  vcard?: string;
  displayName?: string;
  /** the preview of the text's first link */
  linkPreview?: LinkPreviewPayload;
  status?: MessageStatus;
  /** the engine's own copy of the message (kept in the store for quotes and poll votes); removed before publishing */
  raw?: unknown;
  /** raw attachment from the engine; replaced by mediaId before the event is published */
  media?: MediaAttachment;
}

export interface LinkPreviewPayload {
  url: string;
  title: string;
  description?: string;
  /** JPEG, base64 */
  thumbnail?: string;
}

/** A link preview as events report it. */
export function linkPreviewPayload(preview: LinkPreview): LinkPreviewPayload {
  return {
    url: preview.url,
    title: preview.title,
    ...(preview.description ? { description: preview.description } : {}),
    ...(preview.thumbnail?.length ? { thumbnail: preview.thumbnail.toString('base64') } : {}),
  };
}

export interface AckPayload {
  messageId: string;
  chatId: string;
  status: DeliveryStatus;
  /** who acknowledged (the recipient, or a group member) */
  by?: JidRef;
  timestamp: string;
}

export interface ReactionPayload {
  messageId: string;
  chatId: string;
  from: JidRef;
  fromMe: boolean;
  /** empty string: the reaction was removed */
  reaction: string;
  timestamp: string;
}

export interface EditPayload {
  messageId: string;
  chatId: string;
  from: JidRef;
  fromMe: boolean;
  text: string;
  timestamp: string;
}

export interface RevokePayload {
  messageId: string;
  chatId: string;
  from: JidRef;
  fromMe: boolean;
  timestamp: string;
}

export interface VotePayload {
  pollMessageId: string;
  chatId: string;
  voter: JidRef;
  /** option texts currently selected by the voter (empty: vote withdrawn) */
  selectedOptions: string[];
  timestamp: string;
}

/** The content part of a message payload. */
export function contentFields(content: OutgoingContent): Partial<MessagePayload> {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: content.text, ...(content.preview ? { linkPreview: linkPreviewPayload(content.preview) } : {}) };
    case 'poll':
      return { type: 'poll', poll: { title: content.title, options: content.options, multiSelect: content.multiSelect } };
    case 'location':
      return { type: 'location', location: { latitude: content.latitude, longitude: content.longitude, ...(content.address ? { address: content.address } : {}), ...(content.name ? { name: content.name } : {}) } };
    case 'contact':
      return { type: 'contact', vcard: content.vcard, displayName: content.displayName };
    default:
      return {
        type: content.type,
        ...(content.caption !== undefined ? { caption: content.caption } : {}),
        ...(content.ptt !== undefined ? { ptt: content.ptt } : {}),
        media: {
          ...(content.media.file ? { file: content.media.file } : { data: content.media.data }),
          mimeType: content.media.mimeType,
          size: content.media.size,
          ...(content.media.filename ? { filename: content.media.filename } : {}),
        },
      };
  }
}
