// Schemas of the call routes.
import { sessionName } from './common.js';

/** A call id as the networks make them (Baileys: 32 hex digits; the sandbox's may be chosen): bounded, no separators. */
export const callId = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[0-9A-Za-z._:-]+$',
  description: 'the `callId` of a call.received event',
  'x-invalid-message': 'is not a call id (letters, digits, `.`, `_`, `:` and `-`, up to 128)',
} as const;

export const callParams = {
  type: 'object',
  required: ['session', 'callId'],
  properties: { session: sessionName, callId },
} as const;
