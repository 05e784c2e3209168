// Presence routes (SPEC §4 "Presence"): set own, last-known presence of subscribed contacts, subscribe.
import { emptyBody, paging, sessionParams } from '../schemas/common.js';
import { presenceParams, setPresenceBody } from '../schemas/presence.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export function presenceRoutes({ presence }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/sessions/:session/presence',
      operationId: 'setPresence',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'set the session\'s own presence (available or unavailable)',
      schema: { params: sessionParams, body: setPresenceBody },
      async handler({ params, body }) {
        await presence.set(params.session, body.presence);
        return done(`presence set to ${body.presence}`);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/presence',
      operationId: 'listPresence',
      responses: { 200: { data: listOf('Presence') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'last-known presence of every subscribed contact',
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        const { items, total } = await presence.list(params.session, query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, items, total);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/presence/:chatId',
      operationId: 'getPresence',
      responses: { 200: { data: ref('Presence') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'last-known presence of one contact',
      schema: { params: presenceParams },
      handler: ({ params }) => presence.get(params.session, params.chatId),
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/presence/:chatId/subscribe',
      operationId: 'subscribePresence',
      responses: { 200: { data: ref('Done') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'subscribe to a contact\'s presence; presence.update events follow',
      schema: { params: presenceParams, body: emptyBody },
      async handler({ params }) {
        const jid = await presence.subscribe(params.session, params.chatId);
        return done(`subscribed to the presence of ${jid}`);
      },
    },
  ];
}
