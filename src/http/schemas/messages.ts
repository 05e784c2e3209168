// Schemas of the message routes (SPEC §4 "Messages", limits of §8, field names of DESIGN §3).
import { MIME_PATTERN } from '../../media/mime.js';
import { CONTENT_FIELDS, FIELDS_BY_TYPE, MEDIA_KINDS, TYPE_ALIASES } from '../../messages/content.js';
import type { RuleBeyondSchema } from '../types.js';
import { bodySession, chatId, personId, sessionName } from './common.js';

/** Content fields shared by the send route and the sandbox inbound route. */
export const contentProperties = {
  type: { enum: ['text', 'image', 'video', 'voice', 'audio', 'file', 'document', 'sticker', 'poll', 'location', 'contact'] },
  text: { type: 'string', minLength: 1, maxLength: 65_536 },
  linkPreview: { type: 'boolean' },
  url: { type: 'string', minLength: 1, maxLength: 4096 },
  base64: { type: 'string', minLength: 1, contentEncoding: 'base64', description: 'the file, base64 (or a data: URI)' },
  /** anchored at both ends: the type is stored and served back as a Content-Type header (no CR/LF or other junk) */
  mimeType: { type: 'string', minLength: 3, maxLength: 255, pattern: MIME_PATTERN },
  caption: { type: 'string', maxLength: 1024 },
  filename: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^/\\\\\\x00-\\x1f]+$' },
  ptt: { type: 'boolean' },
  pollTitle: { type: 'string', minLength: 1, maxLength: 255 },
  pollOptions: { type: 'array', minItems: 2, maxItems: 12, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 } },
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

/**
 * Which content fields each message type takes and needs (src/messages/content.ts checkContentFields, which still runs
 * after the schema): a field of another type is refused, media need exactly one of url or base64.
 */
const REQUIRED_BY_TYPE: Record<string, string[]> = { text: ['text'], file: ['filename'], poll: ['pollTitle', 'pollOptions'], location: ['latitude', 'longitude'], contact: ['vcard'] };

/**
 * Each subschema says `unevaluatedProperties: true` (what JSON Schema assumes anyway): validators that close every
 * schema with properties by default (Redocly's example check) would otherwise read a `then` as refusing the other fields.
 */
const open = { unevaluatedProperties: true } as const;
const contentField = (field: string) => (contentProperties as Record<string, object>)[field]!;

export const contentRules = Object.entries(FIELDS_BY_TYPE).map(([type, fields]) => {
  const names = [type, ...Object.keys(TYPE_ALIASES).filter((alias) => TYPE_ALIASES[alias] === type)];
  const refused = [...CONTENT_FIELDS].filter((field) => !fields.includes(field));
  const required = REQUIRED_BY_TYPE[type] ?? [];
  const media = MEDIA_KINDS.has(type) ? ['url', 'base64'] : [];
  return {
    if: { required: ['type'], properties: { type: names.length === 1 ? { const: type } : { enum: names } }, ...open },
    then: {
      ...(required.length ? { required, 'x-required-message': `is required for ${type} messages` } : {}),
      properties: {
        ...Object.fromEntries([...required, ...media].map((field) => [field, contentField(field)])),
        ...Object.fromEntries(refused.map((field) => [field, { not: {}, 'x-invalid-message': `is not used by ${type} messages` }])),
      },
      ...(media.length ? { oneOf: [{ required: ['url'] }, { required: ['base64'] }], 'x-invalid-message': 'exactly one of url or base64 is required' } : {}),
      ...open,
    },
  };
});

/** statusViewers only on a status post */
const statusViewersRule = {
  if: { required: ['statusViewers'], properties: { statusViewers: true }, ...open },
  then: {
    properties: { chatId: { pattern: '^\\s*status@broadcast\\s*$', 'x-invalid-message': 'must be status@broadcast when statusViewers is given' } },
    ...open,
  },
} as const;

const sendProperties = {
  chatId,
  ...contentProperties,
  statusViewers: {
    type: 'array',
    minItems: 1,
    maxItems: 1000,
    items: personId,
    description: 'status posts only (chatId `status@broadcast`): who sees it; default every contact the session knows',
  },
} as const;

/** POST /api/sessions/{session}/messages/send: the session is the path's. */
export const sendMessageBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'type'],
  properties: { session: bodySession, ...sendProperties },
  allOf: [...contentRules, statusViewersRule],
} as const;

/** POST /api/messages/send (deprecated): the session in the body. */
export const sendMessageBodyWithSession = {
  ...sendMessageBody,
  required: ['session', 'chatId', 'type'],
  properties: { session: sessionName, ...sendProperties },
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

/** What a send may be refused for that the schema cannot say (it reads the file, the text, or the session's contacts). */
export const SEND_RULES: RuleBeyondSchema[] = [
  { path: '/url', rule: "must lead to a file of the message type's kind (e.g. an image for image messages)" },
  { path: '/base64', rule: "must be base64 (one alphabet) of a file of the message type's kind" },
  { path: '/mentions', rule: 'each must also appear in the text (or caption) as @<number>' },
  { path: '/vcard', rule: 'must be a vCard 3.0 with BEGIN, VERSION:3.0, FN and END lines' },
  { path: '/pollOptions', rule: 'must not repeat an option once spaces around are trimmed' },
  { path: '/statusViewers', rule: 'is required when the session knows no contacts to show a status post to' },
];
