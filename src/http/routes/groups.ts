// Group routes (SPEC §4 "Groups"): create, list, get, leave, delete, subject, description, picture (set, remove, read), participants, invites, join.
import { checkBodySession } from '../../chats/ids.js';
import type { ParticipantAction } from '../../engine/types.js';
import { emptyBody, paging, sessionParams } from '../schemas/common.js';
import { createGroupBody, descriptionBody, groupParams, joinBody, joinQuery, participantsBody, pictureBody, PICTURE_RULES, subjectBody } from '../schemas/groups.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref, withRequired } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

const GROUP = '/api/sessions/:session/groups/:groupId';

export function groupRoutes({ groups }: Services): RouteDef[] {
  const participantsRoute = (method: 'POST' | 'DELETE', path: string, action: ParticipantAction, summary: string): RouteDef => ({
    method,
    path,
    operationId: `${action}GroupParticipants`,
    responses: { 200: { data: ref('ParticipantResults') } },
    access: 'chats:manage',
    sessionFrom: 'params',
    summary,
    schema: { params: groupParams, body: participantsBody },
    async handler({ params, body }) {
      checkBodySession(params.session, body.session);
      return groups.updateParticipants(params.session, params.groupId, action, body.participants);
    },
  });

  return [
    {
      method: 'POST',
      path: '/api/sessions/:session/groups',
      operationId: 'createGroup',
      responses: { 201: { data: withRequired('Group', ['results']) } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'create a group; the session becomes its super admin; results per participant',
      schema: { params: sessionParams, body: createGroupBody },
      async handler({ params, body, ctx }) {
        checkBodySession(params.session, body.session);
        const group = await groups.create(params.session, body.name, body.participants ?? []);
        ctx.status = 201;
        return group;
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/groups',
      operationId: 'listGroups',
      responses: { 200: { data: listOf('Group') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the groups the session is in',
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        const all = await groups.list(params.session);
        const offset = query.offset ?? 0;
        return paged(ctx, all.slice(offset, offset + (query.limit ?? 1000)), all.length);
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:session/groups/join',
      operationId: 'previewGroupInvite',
      responses: { 200: { data: ref('InvitePreview') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'preview the group an invite code opens, without joining',
      schema: { params: sessionParams, query: joinQuery },
      handler: ({ params, query }) => groups.preview(params.session, query.inviteCode),
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/groups/join',
      operationId: 'joinGroup',
      responses: { 200: { data: ref('Group') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'join the group of an invite code (the code only, not the link)',
      schema: { params: sessionParams, body: joinBody },
      handler({ params, body }) {
        if (body.session !== undefined) checkBodySession(params.session, body.session);
        return groups.join(params.session, body.code);
      },
    },
    {
      method: 'GET',
      path: GROUP,
      operationId: 'getGroup',
      responses: { 200: { data: ref('Group') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'a group with its participants',
      schema: { params: groupParams },
      handler: ({ params }) => groups.get(params.session, params.groupId),
    },
    {
      method: 'DELETE',
      path: GROUP,
      operationId: 'deleteGroup',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'delete a group (its creator only)',
      schema: { params: groupParams, body: emptyBody },
      async handler({ params }) {
        await groups.delete(params.session, params.groupId);
        return done(`group ${params.groupId} deleted`);
      },
    },
    {
      method: 'POST',
      path: `${GROUP}/leave`,
      operationId: 'leaveGroup',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'the session leaves the group',
      schema: { params: groupParams, body: emptyBody },
      async handler({ params }) {
        await groups.leave(params.session, params.groupId);
        return done(`left group ${params.groupId}`);
      },
    },
    {
      method: 'PUT',
      path: `${GROUP}/subject`,
      operationId: 'setGroupSubject',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'rename the group (admins)',
      schema: { params: groupParams, body: subjectBody },
      async handler({ params, body }) {
        checkBodySession(params.session, body.session);
        await groups.setSubject(params.session, params.groupId, body.value);
        return done('group subject updated');
      },
    },
    {
      method: 'PUT',
      path: `${GROUP}/description`,
      operationId: 'setGroupDescription',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'set the group description; empty clears it (admins)',
      schema: { params: groupParams, body: descriptionBody },
      async handler({ params, body }) {
        checkBodySession(params.session, body.session);
        await groups.setDescription(params.session, params.groupId, body.value);
        return done('group description updated');
      },
    },
    {
      method: 'PUT',
      path: `${GROUP}/picture`,
      operationId: 'setGroupPicture',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'set the group picture from an HTTPS URL or base64 (JPEG or PNG, ≤ 5 MB; admins)',
      schema: { params: groupParams, body: pictureBody },
      rulesBeyondSchema: PICTURE_RULES,
      bodyLimit: 'media',
      async handler({ params, body, ctx }) {
        if (body.session !== undefined) checkBodySession(params.session, body.session);
        await groups.setPicture(params.session, params.groupId, body, ctx.state.principal);
        return done('group picture updated');
      },
    },
    {
      method: 'DELETE',
      path: `${GROUP}/picture`,
      operationId: 'removeGroupPicture',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'remove the group picture (admins)',
      schema: { params: groupParams, body: emptyBody },
      async handler({ params }) {
        await groups.removePicture(params.session, params.groupId);
        return done('group picture removed');
      },
    },
    {
      method: 'GET',
      path: `${GROUP}/picture`,
      operationId: 'getGroupPicture',
      responses: { 200: { data: ref('ContactPicture') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the group picture URL; 404 PICTURE_NOT_FOUND when it has none',
      schema: { params: groupParams },
      handler: ({ params }) => groups.picture(params.session, params.groupId),
    },
    {
      method: 'GET',
      path: `${GROUP}/participants`,
      operationId: 'listGroupParticipants',
      responses: { 200: { data: listOf('Participant') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the participants with phoneNumber, lid, isAdmin, isSuperAdmin',
      schema: { params: groupParams, query: paging },
      async handler({ params, query, ctx }) {
        const all = await groups.participants(params.session, params.groupId);
        const offset = query.offset ?? 0;
        return paged(ctx, all.slice(offset, offset + (query.limit ?? 1000)), all.length);
      },
    },
    participantsRoute('POST', `${GROUP}/participants`, 'add', 'add participants (admins); a result per participant'),
    participantsRoute('DELETE', `${GROUP}/participants`, 'remove', 'remove participants (admins); a result per participant'),
    participantsRoute('POST', `${GROUP}/participants/promote`, 'promote', 'make participants admins (the creator only); a result per participant'),
    participantsRoute('POST', `${GROUP}/participants/demote`, 'demote', 'take admin rights away (the creator only); a result per participant'),
    {
      method: 'GET',
      path: `${GROUP}/invite`,
      operationId: 'getGroupInvite',
      responses: { 200: { data: ref('Invite') } },
      access: 'sessions:read',
      sessionFrom: 'params',
      summary: 'the current invite code and link (admins)',
      schema: { params: groupParams },
      handler: ({ params }) => groups.invite(params.session, params.groupId),
    },
    {
      method: 'DELETE',
      path: `${GROUP}/invite`,
      operationId: 'revokeGroupInvite',
      responses: { 200: { data: ref('Invite') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'revoke the invite link; returns the new code (the old one stops working; admins)',
      schema: { params: groupParams, body: emptyBody },
      handler: ({ params }) => groups.revokeInvite(params.session, params.groupId),
    },
  ];
}
