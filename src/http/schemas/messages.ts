// Schemas of the message routes (SPEC §4 "Messages", limits of §8, field names of DESIGN §3).
import { MIME_PATTERN } from '../../media/mime.js';
import { chatId, personId, sessionName } from './common.js';

/** Content fields shared by the send route and the sandbox inbound route. */
export const contentProperties = {
  type: { enum: ['text', 'image', 'video', 'voice', 'audio', 'file', 'document', 'sticker', 'poll', 'location', 'contact'] },
  text: { type: 'string', minLength: 1, maxLength: 65_536 },
  linkPreview: { type: 'boolean' },
  url: { type: 'string', minLength: 1, maxLength: 4096 },
  base64: { type: 'string', minLength: 1 },
  /** anchored at both ends: the type is stored and served back as a Content-Type header (no CR/LF or other junk) */
  mimeType: { type: 'string', minLength: 3, maxLength: 255, pattern: MIME_PATTERN },
  caption: { type: 'string', maxLength: 1024 },
  filename: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^/\\\\\\x00-\\x1f]+$' },
  ptt: { type: 'boolean' },
  pollTitle: { type: 'string', minLength: 1, maxLength: 255 },
  pollOptions: { type: 'array', minItems: 2, maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 100 } },
  pollMultiSelect: { type: 'boolean' },
  latitude: { type: 'number', minimum: -90, maximum: 90 },
  longitude: { type: 'number', minimum: -180, maximum: 180 },
  address: { type: 'string', maxLength: 1024 },
  name: { type: 'string', maxLength: 255 },
  vcard: { type: 'string', minLength: 1, maxLength: 65_536 },
  mentions: { type: 'array', maxItems: 256, items: personId },
  isForwarded: { type: 'boolean' },
  quotedMessage: {
    type: 'object',
    additionalProperties: false,
    required: ['messageId'],
    properties: {
      messageId: { type: 'string', minLength: 1, maxLength: 128 },
      chatId,
      participant: personId,
      fromMe: { type: 'boolean' },
    },
  },
} as const;

export const sendMessageBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'chatId', 'type'],
  properties: {
    session: sessionName,
    chatId,
    ...contentProperties,
    /** status posts only; STATUS_VIEWERS_MAX */
    statusViewers: { type: 'array', minItems: 1, maxItems: 1000, items: personId },
  },
} as const;

export const pollVoteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'chatId', 'pollMessageId', 'options'],
  properties: {
    session: sessionName,
    chatId,
    pollMessageId: { type: 'string', minLength: 1, maxLength: 128 },
    options: { type: 'array', maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 100 } },
  },
} as const;

export const messageParams = {
  type: 'object',
  required: ['session', 'messageId'],
  properties: { session: sessionName, messageId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

export const editBody = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: { text: contentProperties.text },
} as const;

export const reactBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'messageId', 'reaction'],
  properties: {
    chatId,
    messageId: { type: 'string', minLength: 1, maxLength: 128 },
    reaction: { type: 'string', maxLength: 32 },
  },
} as const;

export const typingBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'state'],
  properties: { chatId, state: { enum: ['composing', 'typing', 'recording', 'paused'] } },
} as const;

export const seenBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'messageId'],
  properties: { chatId, messageId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

export const starBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'messageId'],
  properties: {
    chatId,
    messageId: { type: 'string', minLength: 1, maxLength: 128 },
    star: { type: 'boolean' },
    fromMe: { type: 'boolean' },
    participant: personId,
  },
} as const;
