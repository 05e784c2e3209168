// Schemas of the sandbox control routes (DESIGN §6).
import { STATUS_REASONS } from '../../engine/types.js';
import { DECRYPTION_FAILURE_KINDS } from '../../engine/decryption.js';
import { LOGOUT_REASONS } from '../../engine/logouts.js';
import { chatId, groupId, phoneNumber, phoneOrUserJid, requiredWhen } from './common.js';
import { contentProperties, contentRules } from './messages.js';

/**
 * The most messages one burst or one history sync may ask for. Each is ingested in one request and fans out to every
 * matching webhook: a count without bound let one request fill the disk (362,881 messages grew the database to 15 GB).
 */
export const MAX_SANDBOX_MESSAGES = 100_000;

/** A seeded history from the phone: `messages` messages across `chats` chats (the `history` of a first pairing). */
export const seededHistoryBody = {
  type: 'object',
  additionalProperties: false,
  required: ['messages'],
  properties: {
    messages: { type: 'integer', minimum: 0, maximum: MAX_SANDBOX_MESSAGES },
    chats: { type: 'integer', minimum: 1, maximum: 10_000 },
  },
} as const;

/** The history route: a seeded history, plus media messages the phone still holds (downloaded only when asked for). */
export const historyBody = {
  ...seededHistoryBody,
  properties: {
    ...seededHistoryBody.properties,
    media: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'base64'],
        properties: {
          type: { enum: ['image', 'video', 'voice', 'file', 'sticker'] },
          base64: contentProperties.base64,
          mimeType: contentProperties.mimeType,
          caption: contentProperties.caption,
          filename: contentProperties.filename,
        },
        allOf: contentRules,
      },
    },
  },
} as const;

/** The most older messages one call seeds (the phone keeps at most 1,000 per chat, the newest). */
export const MAX_OLDER_SEED = 1000;

/** Older messages of a chat the phone holds, served on a history request (POST …/chats/{chatId}/history). */
export const olderHistoryBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'messages'],
  properties: {
    chatId: { ...chatId, description: 'the chat (a phone number, user JID or group JID)' },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_OLDER_SEED,
      description: 'oldest first',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: {
          text: { type: 'string', minLength: 1, maxLength: 4096 },
          fromMe: { type: 'boolean', description: 'sent by the session\'s own account (default false)' },
          from: { ...phoneOrUserJid, description: 'the author in a group (a 1:1 chat\'s author is the other person)' },
          timestamp: { type: 'string', format: 'date-time', description: 'when it was sent; by default one a minute, the last a day ago' },
          id: { type: 'string', pattern: '^[0-9A-Za-z]{8,64}$', description: 'its message id (default: a new one)' },
        },
      },
    },
  },
} as const;

export const pairBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    phoneNumber,
    pushName: { type: 'string', minLength: 1, maxLength: 100 },
    business: { type: 'boolean' },
    businessName: { type: 'string', minLength: 1, maxLength: 100 },
    code: { type: 'string', pattern: '^[0-9A-Za-z]{4}-?[0-9A-Za-z]{4}$' },
    /** a seeded history the phone sends once after this first link; same shape and bounds as the history route */
    history: seededHistoryBody,
  },
} as const;

export const disconnectBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    reason: { enum: STATUS_REASONS.filter((r) => r !== 'SCAN_QR' && r !== 'MANUAL_STOP'), description: 'the status reason the drop reports' },
    logoutReason: { enum: [...LOGOUT_REASONS], description: 'instead of `reason`: a forced logout, reported as the real network ends a session for that reason (docs/ENGINES.md)' },
  },
} as const;

/** The silence fault: the network sends the session nothing while its connection stays open. */
export const silenceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['until'],
  properties: {
    until: { enum: ['reconnect', 'restart'], description: '`reconnect`: until the next connection (a soft reconnect ends it); `restart`: until the session restarts' },
  },
} as const;

const faultTarget = {
  chatId: { ...chatId, description: 'only sends to this chat (a phone number or JID) meet the fault; any chat when absent' },
  count: { type: 'integer', minimum: 1, maximum: 1000, description: 'how many sends meet it (default 1)' },
};

/** The network refuses the next sends with an ack error code (WhatsApp's `<ack error>`). */
export const nackFaultBody = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: {
    code: { type: 'string', pattern: '^[0-9]{3}$', description: "the ack's error code: 429 (rate_limited), 463 (reachout_timelocked), 404 (not_on_whatsapp), 479 or 403 (recipient_unreachable), any other (refused)" },
    ...faultTarget,
  },
} as const;

/** The network never acks the next sends (nor delivers them) until they are released. */
export const noAckFaultBody = { type: 'object', additionalProperties: false, properties: faultTarget } as const;

const { type: _contentType, ...contentFields } = contentProperties;

const inboundProperties = (): Record<string, object> => ({
  text: contentProperties.text,
  messageId: { type: 'string', minLength: 1, maxLength: 128 },
  reaction: { type: 'string', maxLength: 32 },
  options: { type: 'array', maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 100 } },
});

/** A virtual contact sends a message, or acts on one (reaction, edit, revoke, read, vote). */
export const inboundBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'type'],
  properties: {
    from: phoneOrUserJid,
    chatId: groupId,
    type: { enum: [...contentProperties.type.enum, 'reaction', 'edit', 'revoke', 'read', 'vote'] },
    ...contentFields,
    messageId: { type: 'string', minLength: 1, maxLength: 128 },
    reaction: { type: 'string', maxLength: 32 },
    options: { type: 'array', maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 100 } },
    senderLidOnly: { type: 'boolean', description: 'the network names the sender by LID only (1:1 messages)' },
  },
  allOf: [
    ...contentRules,
    requiredWhen('type', ['reaction'], ['messageId', 'reaction'], inboundProperties(), 'is required for reaction'),
    requiredWhen('type', ['edit'], ['messageId', 'text'], inboundProperties(), 'is required for edit'),
    requiredWhen('type', ['revoke'], ['messageId'], inboundProperties(), 'is required for revoke'),
    requiredWhen('type', ['read'], ['messageId'], inboundProperties(), 'is required for read'),
    requiredWhen('type', ['vote'], ['messageId', 'options'], inboundProperties(), 'is required for vote'),
  ],
} as const;

export const burstBody = {
  type: 'object',
  additionalProperties: false,
  required: ['count'],
  properties: {
    count: { type: 'integer', minimum: 1, maximum: MAX_SANDBOX_MESSAGES },
    contacts: { type: 'integer', minimum: 1, maximum: 10_000 },
  },
} as const;


/** A virtual contact's message that the session cannot decrypt at first. */
export const undecryptableFaultBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'recovered'],
  properties: {
    from: { ...phoneOrUserJid, description: 'the virtual contact who sends it (a phone number or user JID)' },
    recovered: {
      type: 'boolean',
      description: 'true: the contact answers the retry receipt with a copy that decrypts (message.received); false: it never answers (message.undecryptable after engine.decryption.undecryptableAfterSeconds)',
    },
    text: { type: 'string', minLength: 1, maxLength: 4096, description: 'the text of the copy that decrypts (default "message sent again")' },
    kind: { enum: [...DECRYPTION_FAILURE_KINDS], description: 'why it did not decrypt (default bad_mac)' },
  },
} as const;

/** The most retry receipts one fault asks for (past MAX_RESENDS every count has the same outcome). */
export const MAX_RETRY_RECEIPTS = 20;

/** The recipient of the session's next sent message asks for it again. */
export const retryReceiptsFaultBody = {
  type: 'object',
  additionalProperties: false,
  required: ['count'],
  properties: {
    chatId: { ...chatId, description: 'only the next message sent to this chat (a phone number or JID, as the send names it); default: the next message sent to any chat' },
    count: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_RETRY_RECEIPTS,
      description: 'retry receipts the recipient sends for it: up to 2 it is re-sent and delivered; more and it fails (message.failed, decryption_retry_exhausted)',
    },
  },
} as const;
