// The audit log of admin actions: GET /api/admin/audit (master key, or an API key with audit:read not limited to sessions).
import { GatewayError, ValidationError } from '../../errors.js';
import { auditQuery, type AuditQuery } from '../schemas/audit.js';
import { paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export function auditRoutes({ audit }: Services): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/admin/audit',
      operationId: 'listAuditEntries',
      responses: { 200: { data: listOf('AuditEntry') } },
      example: {
        data: [
          {
            id: 42,
            at: '2026-01-01T12:00:00.000Z',
            actor: { kind: 'key', id: '0b6f2f1e-8d2c-4a8e-9a51-3f3c2f6a9d10', name: 'deploy-bot' },
            action: 'session.delete',
            target: 'shop',
            requestId: '5f0c6d0e-1c7b-4a5e-8f43-2a9d7c1e0b3a',
            outcome: 'succeeded',
            status: 200,
            count: 1,
          },
        ],
      },
      access: 'audit:read',
      summary: 'the audit log of admin actions, newest first (filters: action, actor, target, outcome, since, until)',
      schema: { query: auditQuery },
      rulesBeyondSchema: [{ path: '/until', rule: 'must not be before since' }],
      async handler({ query, ctx }) {
        const principal = ctx.state.principal;
        if (principal?.kind === 'key' && principal.sessions) {
          throw new GatewayError('FORBIDDEN_SESSION', 'the audit log covers every session: read it with the master key or an API key not limited to sessions');
        }
        const { since, until, limit, offset, ...rest } = query as AuditQuery;
        const from = since === undefined ? undefined : Date.parse(since);
        const to = until === undefined ? undefined : Date.parse(until);
        if (from !== undefined && to !== undefined && to < from) throw ValidationError.field('/until', 'must not be before since');
        const { rows, total } = await audit.list({ ...rest, since: from, until: to }, limit ?? 1000, offset ?? 0);
        return paged(ctx, rows, total);
      },
    },
  ];
}
