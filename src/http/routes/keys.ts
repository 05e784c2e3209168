// API-key routes: /api/account/keys (keys:manage; a key manages only the keys it created, within its own rights)
// and the same under /api/admin/keys (master key: every key); GET /api/account says who the calling key is.
import type { KeyOwner } from '../../auth/api-keys.js';
import { emptyBody, paging } from '../schemas/common.js';
import { createKeyBody, keyParams, type CreateKeyBody } from '../schemas/keys.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref, withRequired } from '../schemas/resources.js';
import type { AppContext, RouteDef } from '../types.js';

/** The calling API key, or the operator for the master key. */
function ownerOf(ctx: AppContext): KeyOwner {
  const principal = ctx.state.principal;
  return principal?.kind === 'key' ? principal : { kind: 'operator' };
}

/** What the calling key may do (the console hides what it may not). */
function accountView(principal: AppContext['state']['principal']) {
  if (principal?.kind !== 'key') return { kind: 'master' as const, id: null, name: null, scopes: ['*'], sessions: null, rateLimitPerMinute: null };
  const { id, name, scopes, sessions, rateLimitPerMinute } = principal;
  return { kind: 'key' as const, id, name, scopes: [...scopes], sessions, rateLimitPerMinute };
}

const accountRoute: RouteDef = {
  method: 'GET',
  path: '/api/account',
  access: 'key',
  operationId: 'getAccount',
  responses: { 200: { data: ref('Account') } },
  summary: 'who the calling key is: the master key, or an API key with its scopes, sessions and rate limit',
  schema: {},
  handler: ({ ctx }) => accountView(ctx.state.principal),
};

export function keyRoutes({ apiKeys }: Services): RouteDef[] {
  return [accountRoute, ...keyRoutesUnder(apiKeys), exemptionRoute(apiKeys)];
}

/**
 * The operator exempts a key's sends from the send governor (or ends it). The master key's alone: an exemption lifts the
 * protection of every session the key reaches, which no key can grant from rights it holds (a key holds no exemption).
 */
function exemptionRoute(apiKeys: Services['apiKeys']): RouteDef {
  return {
    method: 'PATCH',
    path: '/api/admin/keys/:id',
    access: 'master',
    operationId: 'updateAdminKey',
    responses: { 200: { data: ref('ApiKey') } },
    example: { body: { governorExempt: true } },
    audit: { action: 'key.update', details: ({ body }) => ({ governorExempt: (body as { governorExempt: boolean }).governorExempt }) },
    summary: "change an API key: `governorExempt` exempts its sends from the send governor (pace, gaps, caps, queue); master key only",
    schema: {
      params: keyParams,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['governorExempt'],
        properties: { governorExempt: { type: 'boolean', description: "true: the key's sends skip the send governor; false: they are governed again" } },
      },
    },
    handler: ({ params, body }) => apiKeys.setGovernorExempt(params.id, (body as { governorExempt: boolean }).governorExempt),
  };
}

function keyRoutesUnder(apiKeys: Services['apiKeys']): RouteDef[] {
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
        audit: {
          action: 'key.create',
          target: ({ data }) => data?.id,
          details: ({ data }) => ({ name: data.name, scopes: data.scopes, sessions: data.sessions, rateLimitPerMinute: data.rateLimitPerMinute }),
        },
        summary: 'create an API key within the caller\'s own scopes and sessions (the key is returned once)',
        schema: { body: createKeyBody },
        async handler({ body, ctx }) {
          const created = await apiKeys.create(body as CreateKeyBody, ownerOf(ctx));
          ctx.status = 201;
          return created;
        },
      },
      {
        method: 'GET',
        path: base,
        access,
        operationId: admin ? 'listAdminKeys' : 'listApiKeys',
        responses: { 200: { data: listOf('ApiKey') } },
        summary: 'list API keys (never the keys themselves): all for the master key, those it created for an API key',
        schema: { query: paging },
        async handler({ query, ctx }) {
          const all = await apiKeys.list(ownerOf(ctx));
          const offset = query.offset ?? 0;
          return paged(ctx, all.slice(offset, offset + (query.limit ?? 1000)), all.length);
        },
      },
      {
        method: 'DELETE',
        path: `${base}/:id`,
        access,
        operationId: admin ? 'revokeAdminKey' : 'revokeApiKey',
        responses: { 200: { data: ref('Done') } },
        audit: 'key.revoke',
        summary: 'revoke an API key (an API key may revoke only the keys it created)',
        schema: { params: keyParams, body: emptyBody },
        async handler({ params, ctx }) {
          await apiKeys.revoke(params.id, ownerOf(ctx));
          return done(`API key ${params.id} revoked`);
        },
      },
    ];
  });
}
