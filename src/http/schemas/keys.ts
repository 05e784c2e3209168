// Schemas of the API-key routes.
import { SCOPES } from '../../auth/scopes.js';
import { sessionName } from './common.js';

export const createKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: { type: 'array', minItems: 1, maxItems: SCOPES.length, items: { enum: SCOPES } },
    sessions: { type: 'array', minItems: 1, maxItems: 1000, items: sessionName },
  },
} as const;

export const keyParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;
