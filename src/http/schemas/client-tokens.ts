// Schemas of the client-token and client-rules routes.
import { sessionName } from './common.js';

export const mintTokenBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'ephemeralId'],
  properties: {
    session: sessionName,
    ephemeralId: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
    ttlSeconds: { type: 'integer' },
  },
} as const;

export const clientRulesBody = {
  type: 'object',
  additionalProperties: false,
  required: ['recipientMode'],
  properties: {
    recipientMode: { type: 'string' },
    enabled: { type: 'boolean' },
    allowedActions: { type: 'string', maxLength: 1000 },
    rateLimitPerMinute: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    dailySendCap: { type: 'integer', minimum: 0, maximum: 100_000_000 },
    allowedOrigins: { type: 'string', maxLength: 8000 },
  },
} as const;
