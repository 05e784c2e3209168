// Schemas of the client-token and client-rules routes.
import { CLIENT_ACTIONS } from '../../auth/client-actions.js';
import { RECIPIENT_MODES } from '../../auth/client-rules.js';
import { csvOf, sessionName } from './common.js';
import { originListPattern } from './url-patterns.js';

/** `ttlSeconds` is bounded by the daemon's clientTokens.maxTtlSeconds, so the schema is made with it. */
export const mintTokenBody = (maxTtlSeconds: number) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['session', 'ephemeralId'],
    properties: {
      session: sessionName,
      ephemeralId: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
      ttlSeconds: {
        type: 'integer',
        minimum: 1,
        maximum: maxTtlSeconds,
        description: `the token's lifetime in seconds, 1–${maxTtlSeconds} (CLIENT_TOKEN_MAX_TTL); default min(900, that)`,
        'x-error-code': 'INVALID_TTL',
        'x-error-message': `ttlSeconds must be between 1 and ${maxTtlSeconds}`,
      },
    },
  }) as const;

const ACTIONS_CSV = csvOf(CLIENT_ACTIONS);

export const clientRulesBody = {
  type: 'object',
  additionalProperties: false,
  required: ['recipientMode'],
  properties: {
    recipientMode: {
      enum: RECIPIENT_MODES,
      description: '`none` (client tokens only read), `conversation` (only to chats that wrote to the session), `any`; `verified` is reserved',
      'x-error-code': 'INVALID_RECIPIENT_MODE',
      'x-error-message': `recipientMode must be one of ${RECIPIENT_MODES.join(', ')}`,
    },
    enabled: { type: 'boolean' },
    allowedActions: { type: 'string', maxLength: 1000, pattern: ACTIONS_CSV, 'x-csv-of': CLIENT_ACTIONS, description: `a comma list of: ${CLIENT_ACTIONS.join(', ')}`, 'x-invalid-message': `must be a comma list of: ${CLIENT_ACTIONS.join(', ')}` },
    rateLimitPerMinute: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    dailySendCap: { type: 'integer', minimum: 0, maximum: 100_000_000 },
    allowedOrigins: {
      type: 'string',
      maxLength: 8000,
      pattern: originListPattern(),
      description: 'a comma list of origins as browsers send them (`https://app.example.com`, `http://localhost:3000`: lowercase, a name or IPv4 address, no default port, no path); empty: any origin',
      'x-invalid-message': 'must be a comma list of origins like https://app.example.com',
    },
  },
} as const;
