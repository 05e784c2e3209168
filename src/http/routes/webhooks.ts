// Webhook routes: CRUD of /api/webhooks, the delivery log and manual retry (scope webhooks:manage).
import { GatewayError, notFound } from '../../errors.js';
import type { WebhookRegistry, WebhookView } from '../../webhooks/registry.js';
import { emptyBody, paging } from '../schemas/common.js';
import {
  createWebhookBody,
  deliveriesQuery,
  deliveryParams,
  updateWebhookBody,
  webhookParams,
  type CreateWebhookBody,
  type UpdateWebhookBody,
} from '../schemas/webhooks.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref, withRequired } from '../schemas/resources.js';
import type { AppContext, RouteDef } from '../types.js';

/** The sessions a session-limited API key may use, or null for the master key and unlimited keys. */
function allowedSessions(ctx: AppContext): readonly string[] | null {
  const principal = ctx.state.principal;
  return principal?.kind === 'key' ? principal.sessions : null;
}

/** A session-limited key may only manage webhooks filtered to one of its sessions. */
function assertSessionAllowed(ctx: AppContext, session: string | null): void {
  const allowed = allowedSessions(ctx);
  if (!allowed || (session !== null && allowed.includes(session))) return;
  throw new GatewayError(
    'FORBIDDEN_SESSION',
    session === null
      ? `this API key is limited to sessions ${allowed.join(', ')}: set "session" to one of them`
      : `this API key may not use session ${session}`,
  );
}

/** Looks a webhook up, hiding those a session-limited key may not see. */
async function visible(registry: WebhookRegistry, ctx: AppContext, id: number): Promise<WebhookView> {
  const webhook = await registry.get(id);
  const allowed = allowedSessions(ctx);
  if (allowed && (webhook.session === null || !allowed.includes(webhook.session))) throw notFound('WEBHOOK_NOT_FOUND', `webhook ${id}`);
  return webhook;
}

export function webhookRoutes({ webhooks }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/webhooks',
      operationId: 'createWebhook',
      example: {
        body: { url: 'https://example.com/hooks/whatsapp', events: ['message.received', 'session.status'], session: 'shop' },
        data: {
          id: 7,
          url: 'https://example.com/hooks/whatsapp',
          events: ['message.received', 'session.status'],
          session: 'shop',
          enabled: true,
          headers: [],
          retries: { attempts: 3, delaySeconds: 5, policy: 'exponential' },
          signatureScheme: 'body',
          createdAt: '2026-01-01T00:00:00.000Z',
          updatedAt: '2026-01-01T00:00:00.000Z',
          hmacKey: '9f2c4e6a8b0d1f3e5a7c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d0f',
        },
      },
      responses: { 201: { data: withRequired('Webhook', ['hmacKey']) } },
      access: 'webhooks:manage',
      sessionFrom: ({ body }) => (body as CreateWebhookBody).session,
      audit: {
        action: 'webhook.create',
        target: ({ data }) => data?.id,
        details: ({ data }) => ({ host: hostOf(data.url), events: data.events, session: data.session, enabled: data.enabled }),
      },
      summary: 'register a webhook (the hmacKey is returned only here)',
      schema: { body: createWebhookBody },
      async handler({ body, ctx }) {
        const input = body as CreateWebhookBody;
        assertSessionAllowed(ctx, input.session ?? null);
        const created = await webhooks.create(input, ctx.state.principal);
        ctx.status = 201;
        return created;
      },
    },
    {
      method: 'GET',
      path: '/api/webhooks',
      operationId: 'listWebhooks',
      responses: { 200: { data: listOf('Webhook') } },
      access: 'webhooks:manage',
      summary: 'list webhooks (without their keys)',
      schema: { query: paging },
      async handler({ query, ctx }) {
        const { rows, total } = await webhooks.list(query.limit ?? 1000, query.offset ?? 0, allowedSessions(ctx));
        return paged(ctx, rows, total);
      },
    },
    {
      method: 'GET',
      path: '/api/webhooks/:id',
      operationId: 'getWebhook',
      responses: { 200: { data: ref('Webhook') } },
      access: 'webhooks:manage',
      summary: 'get one webhook (without its key)',
      schema: { params: webhookParams },
      handler: ({ params, ctx }) => visible(webhooks, ctx, params.id),
    },
    {
      method: 'PUT',
      path: '/api/webhooks/:id',
      operationId: 'updateWebhook',
      responses: { 200: { data: ref('Webhook') } },
      access: 'webhooks:manage',
      audit: {
        action: 'webhook.update',
        details: ({ body, data }) => ({ fields: Object.keys(body as UpdateWebhookBody), host: hostOf(data.url), events: data.events, session: data.session, enabled: data.enabled }),
      },
      summary: 'partial update: only supplied fields change; headers replace the list; a new hmacKey applies to the next attempt',
      schema: { params: webhookParams, body: updateWebhookBody },
      rulesBeyondSchema: [
        { path: '/headers', rule: "a `url` on another origin than the stored one needs `headers` again, with their values, when the webhook has headers (stored values never follow it)" },
      ],
      async handler({ params, body, ctx }) {
        await visible(webhooks, ctx, params.id);
        const patch = body as UpdateWebhookBody;
        if (patch.session !== undefined) assertSessionAllowed(ctx, patch.session);
        return webhooks.update(params.id, patch);
      },
    },
    {
      method: 'DELETE',
      path: '/api/webhooks/:id',
      operationId: 'deleteWebhook',
      responses: { 200: { data: ref('Done') } },
      access: 'webhooks:manage',
      audit: 'webhook.delete',
      summary: 'delete a webhook; attempts in flight complete, pending deliveries are dropped',
      schema: { params: webhookParams, body: emptyBody },
      async handler({ params, ctx }) {
        await visible(webhooks, ctx, params.id);
        await webhooks.delete(params.id);
        return done(`webhook ${params.id} deleted`);
      },
    },
    {
      method: 'GET',
      path: '/api/webhooks/:id/deliveries',
      operationId: 'listDeliveries',
      responses: { 200: { data: listOf('Delivery') } },
      access: 'webhooks:manage',
      summary: 'the delivery log of a webhook, newest first (query: status, limit, offset)',
      schema: { params: webhookParams, query: deliveriesQuery },
      async handler({ params, query, ctx }) {
        await visible(webhooks, ctx, params.id);
        const { rows, total } = await webhooks.deliveries(params.id, query.status, query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, rows, total);
      },
    },
    {
      method: 'GET',
      path: '/api/webhooks/:id/deliveries/:deliveryId',
      operationId: 'getDelivery',
      responses: { 200: { data: withRequired('Delivery', ['body']) } },
      access: 'webhooks:manage',
      summary: 'one delivery of the log, with the JSON body it POSTs',
      schema: { params: deliveryParams },
      async handler({ params, ctx }) {
        await visible(webhooks, ctx, params.id);
        return webhooks.delivery(params.id, params.deliveryId);
      },
    },
    {
      method: 'POST',
      path: '/api/webhooks/:id/deliveries/:deliveryId/retry',
      operationId: 'retryDelivery',
      responses: { 200: { data: ref('Delivery') } },
      access: 'webhooks:manage',
      audit: { action: 'webhook.delivery_retry', details: ({ params }) => ({ deliveryId: params.deliveryId }) },
      summary: 're-queue a delivery now with a fresh retry budget',
      schema: { params: deliveryParams, body: emptyBody },
      async handler({ params, ctx }) {
        await visible(webhooks, ctx, params.id);
        return webhooks.retryDelivery(params.id, params.deliveryId);
      },
    },
  ];
}

/** A webhook URL's host alone for the audit log: its path, query and user info may carry a token. */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
