// The chat list: a session's chats by last activity, filtered, a page at a time, and one chat.
import { chatId, sessionName } from '../schemas/common.js';
import { MAX_HISTORY_REQUEST } from '../../engine/types.js';
import { ref } from '../schemas/resources.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const flag = (description: string) => ({ type: 'boolean', description }) as const;
const historyPoint = { type: 'string', minLength: 1, maxLength: 300, pattern: '^\\S+$', 'x-invalid-message': 'is not a cursor, a time or a message id' } as const;

export function chatRoutes({ chatList, history, backfill }: Services): RouteDef[] {
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
    {
      method: 'GET',
      path: '/api/sessions/:session/chats/:chatId/messages',
      operationId: 'listChatMessages',
      responses: { 200: { data: ref('HistoryPage') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: "a page of a chat's stored messages, oldest first: the newest, or those before or after a point (query: before, after, limit)",
      description:
        'A point is a cursor this route gave (`nextBefore`, `nextAfter`), a time (ISO 8601), or the id of a message of the chat ' +
        '(404 MESSAGE_NOT_FOUND when the chat has none of that id).',
      schema: {
        params: { type: 'object', required: ['session', 'chatId'], properties: { session: sessionName, chatId } },
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            before: { ...historyPoint, description: 'the messages before this point (a cursor, a time or a message id)' },
            after: { ...historyPoint, description: 'the messages after this point (a cursor, a time or a message id)' },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
          },
        },
      },
      rulesBeyondSchema: [{ path: '/after', rule: 'before and after cannot both be given' }],
      handler: ({ params, query }) => history.page(params.session, params.chatId, { before: query.before, after: query.after }, query.limit ?? 50),
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/chats/:chatId/history',
      operationId: 'requestChatHistory',
      responses: { 202: { data: ref('HistoryRequest'), description: 'asked; the messages arrive as history.sync events naming `requestId`' } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: "asks the phone for up to `count` (1–50, default 50) messages of the chat older than the oldest stored; they arrive as history.sync events and are stored",
      description:
        'The phone must be online: it answers with an on-demand history sync (`history.sync` with `syncType` `ON_DEMAND`, ' +
        '`requestId` and `chatId`), whose messages are stored like other history and then appear in ' +
        '`GET …/chats/{chatId}/messages`. With nothing older, the answer holds no message, or (Baileys) may never come. ' +
        'A chat with no stored message has nothing to ask from: 409 NO_HISTORY_ANCHOR. A session has at most 2 requests ' +
        'awaiting their answer (60 s at most each) and makes at most 10 a minute: 429 RATE_LIMITED with Retry-After beyond.',
      example: { body: { count: 50 }, data: { requestId: '3EB0A1B2C3D4E5F60718', chatId: '15550001111@s.whatsapp.net', count: 50, before: { messageId: '3EB0C4A1F2D3E4B5A6C7', timestamp: '2026-01-01T00:00:00.000Z' } } },
      schema: {
        params: { type: 'object', required: ['session', 'chatId'], properties: { session: sessionName, chatId } },
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { count: { type: 'integer', minimum: 1, maximum: MAX_HISTORY_REQUEST, default: MAX_HISTORY_REQUEST, description: 'how many older messages to ask for' } },
        },
      },
      async handler({ params, body, ctx }) {
        const asked = await backfill.request(params.session, params.chatId, body?.count ?? MAX_HISTORY_REQUEST);
        ctx.status = 202;
        return asked;
      },
    },
  ];
}
