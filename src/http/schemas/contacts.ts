// Schemas of the contact routes (SPEC §4 "Contacts"; check body of DESIGN §3: {phoneNumbers:[…]} or a bare array).
import { personId, phoneOrUserJid, sessionName } from './common.js';

export const contactParams = {
  type: 'object',
  required: ['session', 'contactId'],
  properties: { session: sessionName, contactId: personId },
} as const;

const phoneNumbers = { type: 'array', minItems: 1, maxItems: 1000, items: phoneOrUserJid } as const;

/** `{phoneNumbers: [...]}`, or the array alone. */
export const checkBody = {
  if: { type: 'array' },
  then: phoneNumbers,
  else: {
    type: 'object',
    additionalProperties: false,
    required: ['phoneNumbers'],
    properties: { phoneNumbers },
  },
} as const;
