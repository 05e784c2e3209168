// Schemas of the presence routes (SPEC §4 "Presence").
import { personId, sessionName } from './common.js';

export const setPresenceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['presence'],
  properties: { presence: { enum: ['available', 'unavailable'] } },
} as const;

export const presenceParams = {
  type: 'object',
  required: ['session', 'chatId'],
  properties: { session: sessionName, chatId: personId },
} as const;
