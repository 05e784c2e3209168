// Client tokens (minted by a server for browser code) and the per-session client rules that govern them.
import { GatewayError } from '../../errors.js';
import { sessionParams, emptyBody } from '../schemas/common.js';
import { clientRulesBody, mintTokenBody } from '../schemas/client-tokens.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export const DEFAULT_TTL_SECONDS = 900;

export function clientTokenRoutes({ clientTokens, clientRules, sessions, config }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/client-tokens',
      operationId: 'mintClientToken',
      example: {
        body: { session: 'shop', ephemeralId: 'visitor-42', ttlSeconds: 600 },
        data: { token: 'svc_ct_eyJhbGciOiJIUzI1NiJ9.eyJzZXNzaW9uIjoic2hvcCJ9.c2lnbmF0dXJl', expiresAt: '2026-01-01T00:10:00.000Z', session: 'shop', ephemeralId: 'visitor-42' },
      },
      responses: { 201: { data: ref('ClientToken') } },
      access: 'sessions:manage',
      sessionFrom: 'body',
      audit: { action: 'client_token.mint', target: ({ body }) => body?.session, details: ({ body, data }) => ({ ephemeralId: body.ephemeralId, expiresAt: data.expiresAt }) },
      summary: 'mint a short-lived client token for one session and ephemeralId',
      schema: { body: mintTokenBody(config.clientTokens.maxTtlSeconds) },
      async handler({ body, ctx }) {
        const max = config.clientTokens.maxTtlSeconds;
        const ttl = body.ttlSeconds ?? Math.min(DEFAULT_TTL_SECONDS, max);
        if (ttl < 1 || ttl > max) {
          throw new GatewayError('INVALID_TTL', `ttlSeconds must be between 1 and ${max}`, [{ path: '/ttlSeconds', message: `must be between 1 and ${max}` }]);
        }
        await sessions.get(body.session);
        ctx.status = 201;
        return clientTokens.mint(body.session, body.ephemeralId, ttl);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/client-rules',
      operationId: 'getClientRules',
      responses: { 200: { data: ref('ClientRules') } },
      access: 'sessions:manage',
      sessionFrom: 'params',
      summary: 'the client rules of a session (404 when none)',
      schema: { params: sessionParams },
      async handler({ params }) {
        await sessions.get(params.session);
        return clientRules.get(params.session);
      },
    },
    {
      method: 'PUT',
      path: '/api/sessions/:session/client-rules',
      operationId: 'setClientRules',
      responses: { 200: { data: ref('ClientRules') } },
      access: 'sessions:manage',
      sessionFrom: 'params',
      audit: {
        action: 'client_rules.set',
        details: ({ data }) => ({
          enabled: data.enabled,
          recipientMode: data.recipientMode,
          allowedActions: data.allowedActions,
          rateLimitPerMinute: data.rateLimitPerMinute,
          dailySendCap: data.dailySendCap,
          allowedOrigins: data.allowedOrigins,
        }),
      },
      summary: 'create or replace the client rules of a session',
      schema: { params: sessionParams, body: clientRulesBody },
      async handler({ params, body }) {
        await sessions.get(params.session);
        return clientRules.put(params.session, body);
      },
    },
    {
      method: 'DELETE',
      path: '/api/sessions/:session/client-rules',
      operationId: 'deleteClientRules',
      responses: { 200: { data: ref('Done') } },
      access: 'sessions:manage',
      sessionFrom: 'params',
      audit: 'client_rules.delete',
      summary: 'remove the client rules; every client token of the session is refused from now on',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        await sessions.get(params.session);
        await clientRules.delete(params.session);
        return done(`client rules of ${params.session} removed; its client tokens are revoked`);
      },
    },
  ];
}
