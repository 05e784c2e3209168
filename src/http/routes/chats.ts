// The chat list: a session's chats by last activity, filtered, a page at a time, and one chat.
import { CHAT_ACTIONS, DEFAULT_MUTE_SECONDS, MAX_PINNED_CHATS, type ChatAction } from '../../chats/chat-list.js';
import { chatId, emptyBody, sessionName } from '../schemas/common.js';
import { MAX_HISTORY_REQUEST } from '../../engine/types.js';
import { ref } from '../schemas/resources.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const flag = (description: string) => ({ type: 'boolean', description }) as const;

const chatParams = { type: 'object', required: ['session', 'chatId'], properties: { session: sessionName, chatId } } as const;

/** How long a mute lasts; at most one of the three (none: 8 hours, WhatsApp's first choice). */
export const muteBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    duration: { type: 'integer', minimum: 60, maximum: 31_622_400, description: 'seconds from now (60 s to 366 days)' },
    until: { type: 'string', format: 'date-time', maxLength: 40, description: 'the end, ISO 8601 with a time zone, in the future' },
    forever: { type: 'boolean', description: 'true: muted until unmuted' },
  },
} as const;

const ACTION_SUMMARY: Record<ChatAction, string> = {
  archive: 'archive a chat',
  unarchive: 'unarchive a chat',
  pin: `pin a chat to the top of the list (at most ${MAX_PINNED_CHATS})`,
  unpin: 'unpin a chat',
  mute: `mute a chat: for \`duration\` seconds, \`until\` a time, or \`forever\` (none given: ${DEFAULT_MUTE_SECONDS / 3600} hours)`,
  unmute: 'unmute a chat',
  read: 'mark a chat read (the unread count goes to 0)',
  unread: 'mark a chat unread',
};

const OPERATION_ID: Record<ChatAction, string> = {
  archive: 'archiveChat',
  unarchive: 'unarchiveChat',
  pin: 'pinChat',
  unpin: 'unpinChat',
  mute: 'muteChat',
  unmute: 'unmuteChat',
  read: 'markChatRead',
  unread: 'markChatUnread',
};
const historyPoint = { type: 'string', minLength: 1, maxLength: 300, pattern: '^\\S+$', 'x-invalid-message': 'is not a cursor, a time or a message id' } as const;

export function chatRoutes({ chatList, history, backfill }: Services): RouteDef[] {
  const actionRoute = (action: ChatAction): RouteDef => ({
    method: 'POST',
    path: `/api/sessions/:session/chats/:chatId/${action}`,
    operationId: OPERATION_ID[action],
    responses: { 200: { data: ref('Chat') } },
    access: 'chats:manage',
    sessionFrom: 'params',
    summary: ACTION_SUMMARY[action],
    description:
      'The change goes to WhatsApp (the account\'s other devices see it), then shows in the chat list; the answer is the chat as the list ' +
      'now shows it, and a chat.* event follows. 404 CHAT_NOT_FOUND for a chat the list does not have; 409 SESSION_NOT_CONNECTED ' +
      'while the session is not connected.',
    schema: { params: chatParams, body: action === 'mute' ? muteBody : emptyBody },
    ...(action === 'mute' ? { example: { body: { duration: 28_800 } } } : {}),
    rulesBeyondSchema: [
      { path: '/chatId', rule: 'must be a person or a group (not a channel or status@broadcast)' },
      ...(action === 'mute'
        ? [
            { path: '/duration', rule: 'at most one of duration, until and forever' },
            { path: '/until', rule: 'must be in the future' },
          ]
        : []),
    ],
    handler: ({ params, body }) => chatList.act(params.session, params.chatId, action, action === 'mute' ? (body ?? {}) : {}),
  });

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
      schema: { params: chatParams },
      handler: ({ params }) => chatList.get(params.session, params.chatId),
    },
    ...CHAT_ACTIONS.map(actionRoute),
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
