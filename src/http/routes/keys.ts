// API-key routes: /api/account/keys (keys:manage) and the same under /api/admin/keys (master key).
import { emptyBody } from '../schemas/common.js';
import { createKeyBody, keyParams } from '../schemas/keys.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function keyRoutes({ apiKeys }: Services): RouteDef[] {
  return (['/api/account/keys', '/api/admin/keys'] as const).flatMap((base): RouteDef[] => {
    const access = base === '/api/admin/keys' ? 'master' : 'keys:manage';
    return [
      {
        method: 'POST',
        path: base,
        access,
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
        summary: 'list API keys (never the keys themselves)',
        schema: {},
        handler: () => apiKeys.list(),
      },
      {
        method: 'DELETE',
        path: `${base}/:id`,
        access,
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
