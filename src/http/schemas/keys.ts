// Schemas of the API-key routes.
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../auth/api-keys.js';
import { SCOPES } from '../../auth/scopes.js';
import { sessionName } from './common.js';

export interface CreateKeyBody {
  name: string;
  scopes: string[];
  sessions?: string[];
  rateLimitPerMinute?: number | null;
}

export const createKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: { type: 'array', minItems: 1, maxItems: SCOPES.length, items: { enum: SCOPES } },
    sessions: { type: 'array', minItems: 1, maxItems: 1000, items: sessionName },
    rateLimitPerMinute: { type: ['integer', 'null'], minimum: 1, maximum: MAX_RATE_LIMIT_PER_MINUTE },
  },
} as const;

export const keyParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;
