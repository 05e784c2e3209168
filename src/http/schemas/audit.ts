// Schemas of the audit log route.
import { AUDIT_ACTIONS } from '../../audit/actions.js';
import { pagingProperties } from './common.js';

export interface AuditQuery {
  action?: string;
  actor?: string;
  target?: string;
  outcome?: 'succeeded' | 'failed';
  since?: string;
  until?: string;
  limit?: number;
  offset?: number;
}

const instant = { type: 'string', format: 'date-time', description: 'ISO 8601 with a time zone, e.g. 2026-01-01T00:00:00Z' } as const;

export const auditQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    action: { enum: AUDIT_ACTIONS },
    actor: { type: 'string', minLength: 1, maxLength: 100, description: '`master`, `key`, `client`, `system`, or an API key id / client token id' },
    target: { type: 'string', minLength: 1, maxLength: 200, description: 'a session name, webhook id or key id' },
    outcome: { enum: ['succeeded', 'failed'] },
    since: instant,
    until: instant,
    ...pagingProperties,
  },
} as const;
