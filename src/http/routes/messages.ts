// Message routes: send (with Prefer: respond-async), poll vote, the stored messages of a session, edit, delete, react, typing, seen, star.
import type { PollVoteBody, QuoteScope, SendBody } from '../../messages/service.js';
import { sessionParams, emptyBody, paging, chatId as chatIdSchema } from '../schemas/common.js';
import { checkBodySession } from '../../chats/ids.js';
import { editBody, messageParams, pollVoteBody, reactBody, seenBody, sendMessageBody, sendMessageBodyWithSession, SEND_RULES, starBody, typingBody } from '../schemas/messages.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';


export function messageRoutes({ messaging, history }: Services): RouteDef[] {
  /** The send route: the session in the path (documented), or in the body (the old form, deprecated, kept working). */
  const sendRoute = (path: '/api/sessions/:session/messages/send' | '/api/messages/send'): RouteDef => {
    const inPath = path.includes(':session');
    return {
      method: 'POST',
      path,
      operationId: inPath ? 'sendMessage' : 'sendMessageSessionInBody',
      ...(inPath ? {} : { deprecated: true as const, description: 'The old form of POST /api/sessions/{session}/messages/send, with the session in the body; it keeps working.' }),
      example: {
        body: { ...(inPath ? {} : { session: 'shop' }), chatId: '+15550001111', type: 'text', text: 'Hello *world*' },
        data: {
          messageId: '3EB0C4A1F2D3E4B5A6C7',
          status: 'sent',
          timestamp: '2026-01-01T00:00:00.000Z',
          chatId: '15550001111@s.whatsapp.net',
          phoneNumber: '+15550001111',
          lid: '200000000000001@lid',
        },
      },
      responses: { 200: { data: ref('SendResult') }, 202: { data: ref('CommandAccepted'), description: 'accepted (`Prefer: respond-async`); the outcome arrives as a command.result event' } },
      access: 'messages:send',
      sessionFrom: inPath ? 'params' : 'body',
      idempotent: true,
      refusable: true,
      summary: 'send a message of any type (Prefer: respond-async answers 202 and reports through command.result)',
      schema: inPath ? { params: sessionParams, body: sendMessageBody } : { body: sendMessageBodyWithSession },
      bodyLimit: 'media',
      rulesBeyondSchema: SEND_RULES,
      async handler({ params, body, ctx }) {
        if (inPath && body.session !== undefined) checkBodySession(params.session, body.session);
        const send = (inPath ? { ...body, session: params.session } : body) as SendBody;
        const caller = { client: ctx.state.principal?.kind === 'client', principal: ctx.state.principal, ...(ctx.state.park ? { park: ctx.state.park } : {}) };
        if (/\brespond-async\b/i.test(ctx.get('Prefer'))) {
          const accepted = await messaging.sendAsync(send, caller);
          ctx.status = 202;
          ctx.set('Preference-Applied', 'respond-async');
          return accepted;
        }
        return messaging.send(send, caller);
      },
    };
  };

  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/messages',
      operationId: 'listMessages',
      responses: { 200: { data: listOf('StoredMessage') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: "the messages the store holds for a session (sent and received, kept messages.retentionDays), newest first",
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        const { messages, total } = await messaging.recent(params.session, query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, messages, total);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/messages/search',
      operationId: 'searchMessages',
      responses: { 200: { data: ref('SearchResults') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: "full-text search of the session's stored messages: those whose text has every word of `q` (a word ending in * as a prefix), newest first (query: q, chatId, limit)",
      schema: {
        params: sessionParams,
        query: {
          type: 'object',
          additionalProperties: false,
          required: ['q'],
          properties: {
            q: { type: 'string', minLength: 1, maxLength: 500, description: 'the words to look for (letters and digits; the rest separates them); `word*` matches the words it begins' },
            chatId: { ...chatIdSchema, description: 'only in this chat' },
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          },
        },
      },
      rulesBeyondSchema: [{ path: '/q', rule: 'must hold a word: a letter or digit' }],
      async handler({ params, query }) {
        return { results: await history.search(params.session, query.q, query.chatId, query.limit ?? 20) };
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/messages/:messageId',
      operationId: 'getMessage',
      responses: { 200: { data: ref('MessageDetail') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'one stored message of the session, by id, with its acks and their times, reactions, poll votes, edits and media record',
      schema: { params: messageParams },
      handler: ({ params }) => history.get(params.session, params.messageId),
    },
    sendRoute('/api/sessions/:session/messages/send'),
    sendRoute('/api/messages/send'),
    {
      method: 'POST',
      path: '/api/messages/poll-vote',
      operationId: 'votePoll',
      idempotent: true,
      example: {
        body: { session: 'shop', chatId: '+15550001111', pollMessageId: '3EB0C4A1F2D3E4B5A6C7', options: ['pizza'] },
        data: { messageId: '3EB0D5B2E3F4A5B6C7D8', pollMessageId: '3EB0C4A1F2D3E4B5A6C7', chatId: '15550001111@s.whatsapp.net', selectedOptions: ['pizza'], timestamp: '2026-01-01T00:00:00.000Z' },
      },
      responses: { 200: { data: ref('PollVote') } },
      access: 'messages:send',
      sessionFrom: 'body',
      summary: 'vote on a poll the session sent or received (options by name; an empty list withdraws the vote)',
      schema: { body: pollVoteBody },
      handler({ body }) {
        return messaging.vote(body as PollVoteBody);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/messages/:messageId/edit',
      operationId: 'editMessage',
      idempotent: true,
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'edit the text of a message the session sent',
      schema: { params: messageParams, body: editBody },
      async handler({ params, body }) {
        await messaging.edit(params.session, params.messageId, body.text);
        return done(`message ${params.messageId} edited`);
      },
    },
    {
      method: 'DELETE',
      path: '/api/sessions/:session/messages/:messageId',
      operationId: 'deleteMessage',
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'delete a message the session sent, for everyone',
      schema: { params: messageParams, body: emptyBody },
      async handler({ params }) {
        await messaging.delete(params.session, params.messageId);
        return done(`message ${params.messageId} deleted for everyone`);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/messages/react',
      operationId: 'reactToMessage',
      idempotent: true,
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'react to a message (an empty reaction removes it)',
      schema: { params: sessionParams, body: reactBody },
      async handler({ params, body }) {
        await messaging.react(params.session, body);
        return done(body.reaction === '' ? 'reaction removed' : 'reaction sent');
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/messages/typing',
      operationId: 'sendTyping',
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'send a typing indicator (returns at once)',
      schema: { params: sessionParams, body: typingBody },
      async handler({ params, body }) {
        await messaging.typing(params.session, body);
        return done(`typing state ${body.state} sent`);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/messages/seen',
      operationId: 'markMessageSeen',
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'send a read receipt for a message',
      schema: { params: sessionParams, body: seenBody },
      async handler({ params, body }) {
        await messaging.seen(params.session, body);
        return done('read receipt sent');
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/messages/star',
      operationId: 'starMessage',
      responses: { 200: { data: ref('Done') } },
      access: 'messages:send',
      sessionFrom: 'params',
      summary: 'star or unstar a message',
      schema: { params: sessionParams, body: starBody },
      rulesBeyondSchema: [
        { path: '/fromMe', rule: 'is required for a message the gateway has not stored' },
        { path: '/participant', rule: 'is required for a group message the session did not send and the gateway has not stored' },
      ],
      async handler({ params, body }) {
        const starred = await messaging.star(params.session, body);
        return done(starred ? 'message starred' : 'message unstarred');
      },
    },
  ];
}
