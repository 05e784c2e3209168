// The send governor's queue of a session: the sends waiting for their turn, and cancelling one before it goes out.
import { emptyBody, paging, sessionName, sessionParams } from '../schemas/common.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

const entryParams = {
  type: 'object',
  required: ['session', 'id'],
  properties: { session: sessionName, id: { type: 'string', format: 'uuid', description: 'the queue entry (queueId of a 202 answer)' } },
} as const;

export function queueRoutes({ messaging, sessions }: Services): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/queue',
      operationId: 'listSendQueue',
      responses: { 200: { data: listOf('QueueEntry') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: "the sends waiting in the session's queue for their turn (the send governor), next first; bodies are not shown",
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        await sessions.get(params.session);
        const { entries, total } = await messaging.queued(params.session, query.limit ?? 100, query.offset ?? 0);
        return paged(
          ctx,
          entries.map((e) => ({
            id: e.id,
            position: e.position,
            messageId: e.messageId,
            chatId: e.chatId,
            type: e.type,
            firstContact: e.firstContact,
            commandId: e.commandId,
            queuedAt: new Date(e.queuedAt).toISOString(),
          })),
          total,
        );
      },
    },
    {
      method: 'DELETE',
      path: '/api/sessions/:session/queue/:id',
      operationId: 'cancelQueuedSend',
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'cancel a queued send before it goes out: its held request gets 409 SEND_CANCELLED, an async one a failed command.result',
      schema: { params: entryParams, body: emptyBody },
      async handler({ params }) {
        await sessions.get(params.session);
        await messaging.cancelQueued(params.session, params.id);
        return done(`queued send ${params.id} cancelled`);
      },
    },
  ];
}
