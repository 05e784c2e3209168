// The chat list: a session's chats by last activity, filtered, a page at a time, and one chat.
import { chatId, sessionName } from '../schemas/common.js';
import { ref } from '../schemas/resources.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const flag = (description: string) => ({ type: 'boolean', description }) as const;

export function chatRoutes({ chatList }: Services): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/chats',
      operationId: 'listChats',
      responses: { 200: { data: ref('ChatPage') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the chats of a session by last activity, with their last message, unread count, state and labels (query: unread, archived, groups, label, cursor, limit)',
      schema: {
        params: { type: 'object', required: ['session'], properties: { session: sessionName } },
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            unread: flag('true: only chats with unread messages; false: only read ones'),
            archived: flag('true: only archived chats; false: only the others'),
            groups: flag('true: only groups; false: only chats that are not groups'),
            label: { type: 'string', minLength: 1, maxLength: 64, description: 'only chats with this label (its id)' },
            cursor: {
              type: 'string',
              minLength: 3,
              maxLength: 300,
              pattern: '^\\d{1,15}:\\S{1,280}$',
              'x-invalid-message': 'is not a cursor this list gave (nextCursor)',
              description: 'where the page starts: the `nextCursor` of the previous page',
            },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
          },
        },
      },
      handler: ({ params, query }) =>
        chatList.list(params.session, { unread: query.unread, archived: query.archived, groups: query.groups, label: query.label }, query.cursor, query.limit ?? 50),
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/chats/:chatId',
      operationId: 'getChat',
      responses: { 200: { data: ref('Chat') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'one chat of the session, as the chat list shows it',
      schema: { params: { type: 'object', required: ['session', 'chatId'], properties: { session: sessionName, chatId } } },
      handler: ({ params }) => chatList.get(params.session, params.chatId),
    },
  ];
}
