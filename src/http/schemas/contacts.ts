// Schemas of the contact routes (SPEC §4 "Contacts"; check body of DESIGN §3: {phoneNumbers:[…]} or a bare array).
import { sessionName } from './common.js';

export const contactParams = {
  type: 'object',
  required: ['session', 'contactId'],
  properties: { session: sessionName, contactId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

const phoneNumbers = { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', maxLength: 64 } } as const;

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
