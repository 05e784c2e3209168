// What a WhatsApp message says, in the gateway's terms: type, text, media, poll, location, contact, context (quote, mentions, forward).
import { extractMessageContent, proto, toNumber, type WAMessage } from '@whiskeysockets/baileys';
import type { MessagePayload } from '../payloads.js';
import type { MessageType } from '../types.js';
import { safeMime } from '../../media/mime.js';

/** Everything downloadContentFromMessage (and a media re-upload request) needs; stored as the media record's `ref`. */
export interface BaileysMediaRef {
  /** Baileys media type: image, video, audio, document, sticker */
  mediaType: 'image' | 'video' | 'audio' | 'document' | 'sticker';
  /** base64 */
  mediaKey: string;
  directPath?: string;
  url?: string;
  /** the message the media belongs to (a re-upload request names it) */
  key: { remoteJid: string; id: string; fromMe: boolean; participant?: string };
}

/** The content fields of a message payload (no ids, no people). */
export type ContentFields = Pick<
  MessagePayload,
  'type' | 'text' | 'caption' | 'ptt' | 'poll' | 'location' | 'vcard' | 'displayName' | 'quotedMessageId' | 'mentions' | 'isForwarded' | 'mimeType' | 'filename' | 'size' | 'media' | 'linkPreview'
>;

type MediaMessage = proto.Message.IImageMessage &
  proto.Message.IVideoMessage &
  proto.Message.IAudioMessage &
  proto.Message.IDocumentMessage &
  proto.Message.IStickerMessage;

const MEDIA: Array<[keyof proto.IMessage, MessageType, BaileysMediaRef['mediaType']]> = [
  ['imageMessage', 'image', 'image'],
  ['videoMessage', 'video', 'video'],
  ['ptvMessage', 'video', 'video'],
  ['audioMessage', 'voice', 'audio'],
  ['documentMessage', 'file', 'document'],
  ['stickerMessage', 'sticker', 'sticker'],
];

/** The text of a message if it has one (conversation, extended text, a caption). */
export function textOf(message: proto.IMessage | null | undefined): string | undefined {
  const content = extractMessageContent(message);
  if (!content) return undefined;
  return (
    content.conversation ??
    content.extendedTextMessage?.text ??
    content.imageMessage?.caption ??
    content.videoMessage?.caption ??
    content.documentMessage?.caption ??
    undefined
  ) || undefined;
}

/** The content fields of `msg`, or undefined for content the gateway does not model (protocol, reactions, votes, unknown types). */
export function contentOf(msg: WAMessage): ContentFields | undefined {
  const content = extractMessageContent(msg.message);
  if (!content) return undefined;
  const context = contextOf(content);
  const base = (fields: ContentFields): ContentFields => ({ ...fields, ...context });

  if (content.conversation != null) return base({ type: 'text', text: content.conversation });
  const extended = content.extendedTextMessage;
  if (extended?.text != null) {
    const preview = previewOf(extended);
    return base({ type: 'text', text: extended.text, ...(preview ? { linkPreview: preview } : {}) });
  }

  for (const [field, type, mediaType] of MEDIA) {
    const media = content[field] as MediaMessage | null | undefined;
    if (!media) continue;
    const mimeType = media.mimetype ? safeMime(media.mimetype) : defaultMime(mediaType);
    const size = media.fileLength == null ? undefined : toNumber(media.fileLength as never);
    const ref: BaileysMediaRef | undefined = media.mediaKey?.length
      ? {
          mediaType,
          mediaKey: Buffer.from(media.mediaKey).toString('base64'),
          ...(media.directPath ? { directPath: media.directPath } : {}),
          ...(media.url ? { url: media.url } : {}),
          key: {
            remoteJid: msg.key.remoteJid ?? '',
            id: msg.key.id ?? '',
            fromMe: !!msg.key.fromMe,
            ...(msg.key.participant ? { participant: msg.key.participant } : {}),
          },
        }
      : undefined;
    return base({
      type,
      ...(media.caption ? { caption: media.caption } : {}),
      ...(type === 'voice' ? { ptt: !!media.ptt } : {}),
      ...(media.fileName ? { filename: media.fileName } : {}),
      mimeType,
      ...(size !== undefined ? { size } : {}),
      ...(ref ? { media: { mimeType, ...(size !== undefined ? { size } : {}), ...(media.fileName ? { filename: media.fileName } : {}), ref } } : {}),
    });
  }

  const poll = content.pollCreationMessage ?? content.pollCreationMessageV2 ?? content.pollCreationMessageV3;
  if (poll) {
    return base({
      type: 'poll',
      poll: { title: poll.name ?? '', options: (poll.options ?? []).map((o) => o.optionName ?? ''), multiSelect: poll.selectableOptionsCount !== 1 },
    });
  }
  const location = content.locationMessage ?? content.liveLocationMessage;
  if (location) {
    const named = location as proto.Message.ILocationMessage;
    return base({
      type: 'location',
      location: {
        latitude: location.degreesLatitude ?? 0,
        longitude: location.degreesLongitude ?? 0,
        ...(named.address ? { address: named.address } : {}),
        ...(named.name ? { name: named.name } : {}),
      },
    });
  }
  const contact = content.contactMessage ?? content.contactsArrayMessage?.contacts?.[0];
  if (contact) {
    return base({ type: 'contact', vcard: contact.vcard ?? '', displayName: contact.displayName ?? content.contactsArrayMessage?.displayName ?? '' });
  }
  if (content.groupInviteMessage) return base({ type: 'text', text: content.groupInviteMessage.caption ?? `invitation to ${content.groupInviteMessage.groupName ?? 'a group'}` });
  return undefined;
}

/** The link preview a text carries (its matched URL and title at least). */
function previewOf(text: proto.Message.IExtendedTextMessage): ContentFields['linkPreview'] {
  const url = text.matchedText;
  if (!url || !text.title) return undefined;
  return {
    url,
    title: text.title,
    ...(text.description ? { description: text.description } : {}),
    ...(text.jpegThumbnail?.length ? { thumbnail: Buffer.from(text.jpegThumbnail).toString('base64') } : {}),
  };
}

/** Quote, mentions and forward flag from the content's contextInfo. */
function contextOf(content: proto.IMessage): Pick<ContentFields, 'quotedMessageId' | 'mentions' | 'isForwarded'> {
  const type = Object.keys(content).find((k) => k !== 'messageContextInfo');
  const inner = type ? (content as Record<string, unknown>)[type] : undefined;
  const info = inner && typeof inner === 'object' ? ((inner as { contextInfo?: proto.IContextInfo | null }).contextInfo ?? undefined) : undefined;
  if (!info) return {};
  return {
    ...(info.stanzaId ? { quotedMessageId: info.stanzaId } : {}),
    ...(info.mentionedJid?.length ? { mentions: info.mentionedJid } : {}),
    ...(info.isForwarded ? { isForwarded: true } : {}),
  };
}

function defaultMime(mediaType: BaileysMediaRef['mediaType']): string {
  switch (mediaType) {
    case 'image':
      return 'image/jpeg';
    case 'video':
      return 'video/mp4';
    case 'audio':
      return 'audio/ogg; codecs=opus';
    case 'sticker':
      return 'image/webp';
    default:
      return 'application/octet-stream';
  }
}

/** Unix seconds (number or Long) → ISO 8601; now when absent. */
export function isoOf(timestamp: unknown): string {
  const seconds = timestamp == null ? 0 : toNumber(timestamp as number);
  return new Date(seconds > 0 ? seconds * 1000 : Date.now()).toISOString();
}

/** The message secret of a poll (or event) message, base64. */
export function messageSecretOf(message: proto.IMessage | null | undefined): string | undefined {
  const secret = message?.messageContextInfo?.messageSecret;
  return secret?.length ? Buffer.from(secret).toString('base64') : undefined;
}

/** A WAMessage as plain JSON (bytes base64), the form the message store keeps as `raw`. */
export function toRaw(msg: WAMessage): Record<string, unknown> {
  const info = msg instanceof proto.WebMessageInfo ? msg : proto.WebMessageInfo.fromObject(msg as unknown as Record<string, unknown>);
  return proto.WebMessageInfo.toObject(info, { longs: Number, enums: Number, bytes: String });
}

/** The WAMessage back from its stored JSON; undefined when it is not one. */
export function fromRaw(raw: unknown): WAMessage | undefined {
  if (!raw || typeof raw !== 'object' || !('key' in raw)) return undefined;
  try {
    return proto.WebMessageInfo.fromObject(raw as Record<string, unknown>) as WAMessage;
  } catch {
    return undefined;
  }
}
