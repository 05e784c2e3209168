// Label routes (SPEC §4 "Labels", business accounts only): list, create, update, delete, chats of a label.
import { paging, sessionParams, emptyBody } from '../schemas/common.js';
import { createLabelBody, labelChatsBody, labelParams, updateLabelBody } from '../schemas/labels.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

const LABEL = '/api/sessions/:session/labels/:labelId';

export function labelRoutes({ labels }: Services): RouteDef[] {
  const chatsRoute = (method: 'POST' | 'DELETE', assigned: boolean): RouteDef => ({
    method,
    path: `${LABEL}/chats`,
    operationId: assigned ? 'addLabelChats' : 'removeLabelChats',
    responses: { 200: { data: ref('LabelChats') } },
    access: 'chats:manage',
    sessionFrom: 'params',
    summary: assigned ? 'put the label on chats ({chatIds:[…]} or a bare array)' : 'take the label off chats ({chatIds:[…]} or a bare array)',
    schema: { params: labelParams, body: labelChatsBody },
    handler({ params, body }) {
      return labels.setChats(params.session, params.labelId, Array.isArray(body) ? body : body.chatIds, assigned);
    },
  });

  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/labels',
      operationId: 'listLabels',
      responses: { 200: { data: listOf('Label') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the labels of a business session',
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        const { items, total } = await labels.list(params.session, query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, items, total);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/labels',
      operationId: 'createLabel',
      responses: { 201: { data: ref('Label') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'create a label {name, color}',
      schema: { params: sessionParams, body: createLabelBody },
      async handler({ params, body, ctx }) {
        const label = await labels.create(params.session, body);
        ctx.status = 201;
        return label;
      },
    },
    {
      method: 'PUT',
      path: LABEL,
      operationId: 'updateLabel',
      responses: { 200: { data: ref('Label') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'rename or recolour a label {name?, color?}',
      schema: { params: labelParams, body: updateLabelBody },
      handler: ({ params, body }) => labels.update(params.session, params.labelId, body),
    },
    {
      method: 'DELETE',
      path: LABEL,
      operationId: 'deleteLabel',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'delete a label and its chat assignments',
      schema: { params: labelParams, body: emptyBody },
      async handler({ params }) {
        await labels.delete(params.session, params.labelId);
        return done(`label ${params.labelId} deleted`);
      },
    },
    {
      method: 'GET',
      path: `${LABEL}/chats`,
      operationId: 'listLabelChats',
      responses: { 200: { data: { type: 'array', items: { type: 'string' } } } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the chats that have the label',
      schema: { params: labelParams, query: paging },
      async handler({ params, query, ctx }) {
        const all = await labels.chats(params.session, params.labelId);
        const offset = query.offset ?? 0;
        return paged(ctx, all.slice(offset, offset + (query.limit ?? 1000)), all.length);
      },
    },
    chatsRoute('POST', true),
    chatsRoute('DELETE', false),
  ];
}
