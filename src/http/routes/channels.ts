// Channel routes (SPEC §4 "Channels"): create, list, get, delete, follow/unfollow, mute/unmute.
import { checkBodySession } from '../../chats/ids.js';
import { emptyBody, paging, sessionParams } from '../schemas/common.js';
import { channelParams, createChannelBody } from '../schemas/channels.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

const CHANNEL = '/api/sessions/:session/channels/:channelId';

export function channelRoutes({ channels }: Services): RouteDef[] {
  const toggle = (method: 'POST' | 'DELETE', what: 'follow' | 'mute', on: boolean): RouteDef => ({
    method,
    path: `${CHANNEL}/${what}`,
    operationId: `${on ? '' : 'un'}${what}Channel`,
    responses: { 200: { data: ref('Done') } },
    access: 'chats:manage',
    sessionFrom: 'params',
    summary: `${on ? '' : 'un'}${what} a channel`,
    schema: { params: channelParams, body: emptyBody },
    rulesBeyondSchema: [{ path: '/channelId', rule: what === 'follow' ? "must not be the session's own channel (its owner cannot unfollow it)" : 'must be a channel the session follows' }],
    async handler({ params }) {
      if (what === 'follow') await channels.follow(params.session, params.channelId, on);
      else await channels.mute(params.session, params.channelId, on);
      return done(`channel ${params.channelId} ${on ? '' : 'un'}${what === 'follow' ? 'followed' : 'muted'}`);
    },
  });

  return [
    {
      method: 'POST',
      path: '/api/sessions/:session/channels',
      operationId: 'createChannel',
      responses: { 201: { data: ref('Channel') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'create a channel owned by the session',
      schema: { params: sessionParams, body: createChannelBody },
      async handler({ params, body, ctx }) {
        checkBodySession(params.session, body.session);
        const channel = await channels.create(params.session, body, ctx.state.principal);
        ctx.status = 201;
        return channel;
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/channels',
      operationId: 'listChannels',
      responses: { 200: { data: listOf('Channel') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the channels the session owns or follows',
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        const { items, total } = await channels.list(params.session, query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, items, total);
      },
    },
    {
      method: 'GET',
      path: CHANNEL,
      operationId: 'getChannel',
      responses: { 200: { data: ref('Channel') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'a channel (preview: true when the session does not follow it)',
      schema: { params: channelParams },
      handler: ({ params }) => channels.get(params.session, params.channelId),
    },
    {
      method: 'DELETE',
      path: CHANNEL,
      operationId: 'deleteChannel',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'delete a channel (its owner only)',
      schema: { params: channelParams, body: emptyBody },
      async handler({ params }) {
        await channels.delete(params.session, params.channelId);
        return done(`channel ${params.channelId} deleted`);
      },
    },
    toggle('POST', 'follow', true),
    toggle('DELETE', 'follow', false),
    toggle('POST', 'mute', true),
    toggle('DELETE', 'mute', false),
  ];
}
