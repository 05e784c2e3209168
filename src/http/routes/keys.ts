// API-key routes: /api/account/keys (keys:manage) and the same under /api/admin/keys (master key).
import { emptyBody } from '../schemas/common.js';
import { createKeyBody, keyParams } from '../schemas/keys.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref, withRequired } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export function keyRoutes({ apiKeys }: Services): RouteDef[] {
  return (['/api/account/keys', '/api/admin/keys'] as const).flatMap((base): RouteDef[] => {
    const admin = base === '/api/admin/keys';
    const access = admin ? 'master' : 'keys:manage';
    return [
      {
        method: 'POST',
        path: base,
        access,
        operationId: admin ? 'createAdminKey' : 'createApiKey',
        responses: { 201: { data: withRequired('ApiKey', ['key']) } },
        summary: 'create an API key (the key is returned once)',
        schema: { body: createKeyBody },
        handler({ body, ctx }) {
          ctx.status = 201;
          return apiKeys.create(body);
        },
      },
      {
        method: 'GET',
        path: base,
        access,
        operationId: admin ? 'listAdminKeys' : 'listApiKeys',
        responses: { 200: { data: listOf('ApiKey') } },
        summary: 'list API keys (never the keys themselves)',
        schema: {},
        handler: () => apiKeys.list(),
      },
      {
        method: 'DELETE',
        path: `${base}/:id`,
        access,
        operationId: admin ? 'revokeAdminKey' : 'revokeApiKey',
        responses: { 200: { data: ref('Done') } },
        summary: 'revoke an API key',
        schema: { params: keyParams, body: emptyBody },
        handler({ params }) {
          apiKeys.revoke(params.id);
          return done(`API key ${params.id} revoked`);
        },
      },
    ];
  });
}
