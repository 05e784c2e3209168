// Schemas of the sandbox control routes for presence, calls, contact profiles, groups and chat state (DESIGN §6).
import { callId } from './calls.js';
import { chatId, groupId, personId, phoneOrUserJid, requiredWhen } from './common.js';

const from = phoneOrUserJid;

export const sandboxPresenceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'presence'],
  properties: {
    from,
    presence: { enum: ['available', 'unavailable', 'composing', 'recording', 'paused'] },
    /** ISO 8601 or Unix seconds */
    lastSeen: { type: ['string', 'integer'], minimum: 0, maximum: 99_999_999_999, maxLength: 64, format: 'date-time', description: 'ISO 8601 (date-time) or Unix seconds' },
    chatId: groupId,
  },
} as const;

export const sandboxCallBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'outcome'],
  properties: {
    from,
    outcome: {
      enum: ['received', 'missed', 'cancelled', 'accepted', 'rejected'],
      description: 'received: it rings; missed: it rings out unanswered; cancelled: the caller hangs up first; accepted / rejected: the phone answers / declines it',
    },
    callId: { ...callId, description: 'a call that rings (to say how it ends), or the id a new call gets' },
    isVideo: { type: 'boolean' },
  },
} as const;

const nullableName = { type: ['string', 'null'], minLength: 1, maxLength: 100 } as const;

export const sandboxContactBody = {
  type: 'object',
  additionalProperties: false,
  required: ['phoneNumber'],
  minProperties: 2,
  properties: {
    phoneNumber: phoneOrUserJid,
    pushName: nullableName,
    businessName: nullableName,
    savedName: nullableName,
    pictureUrl: { type: ['string', 'null'], pattern: '^https://', maxLength: 2048 },
    pictureHidden: { type: 'boolean' },
  },
} as const;

const groupActionProperties = {
  code: { type: 'string', minLength: 1, maxLength: 64 },
  groupId,
  value: { type: 'string', maxLength: 2048 },
  participants: { type: 'array', minItems: 1, maxItems: 256, items: personId },
} as const;

export const sandboxGroupBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'action'],
  properties: {
    from,
    action: { enum: ['join', 'leave', 'subject', 'description', 'add', 'remove', 'promote', 'demote'] },
    ...groupActionProperties,
  },
  allOf: [
    requiredWhen('action', ['join'], ['code'], groupActionProperties, 'is required for join'),
    requiredWhen('action', ['leave'], ['groupId'], groupActionProperties, 'is required for leave'),
    requiredWhen('action', ['subject', 'description'], ['groupId', 'value'], groupActionProperties, 'is required for this action'),
    requiredWhen('action', ['add', 'remove', 'promote', 'demote'], ['groupId', 'participants'], groupActionProperties, 'is required for this action'),
  ],
} as const;

export const sandboxChatBody = {
  type: 'object',
  additionalProperties: false,
  required: ['chatId', 'action'],
  properties: {
    chatId,
    action: { enum: ['archive', 'unarchive', 'pin', 'unpin', 'mute', 'unmute', 'read', 'unread', 'clear', 'delete'] },
    /** mute: until when (ISO 8601); omitted mutes for good */
    muteUntil: { type: 'string', format: 'date-time' },
  },
} as const;
