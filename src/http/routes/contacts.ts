// Contact routes (SPEC §4 "Contacts"): list, check numbers, get, picture, block/unblock.
import { emptyBody, paging, sessionParams } from '../schemas/common.js';
import { checkBody, contactParams } from '../schemas/contacts.js';
import { done, paged } from '../respond.js';
import type { Services } from '../services.js';
import { listOf, ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

const CONTACT = '/api/sessions/:session/contacts/:contactId';

export function contactRoutes({ contacts }: Services): RouteDef[] {
  const block = (method: 'POST' | 'DELETE', blocked: boolean): RouteDef => ({
    method,
    path: `${CONTACT}/block`,
    operationId: blocked ? 'blockContact' : 'unblockContact',
    responses: { 200: { data: ref('Done') } },
    access: 'chats:manage',
    sessionFrom: 'params',
    summary: blocked ? 'block a contact' : 'unblock a contact',
    schema: { params: contactParams, body: emptyBody },
    async handler({ params }) {
      const jid = await contacts.setBlocked(params.session, params.contactId, blocked);
      return done(`${jid} ${blocked ? 'blocked' : 'unblocked'}`);
    },
  });

  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/contacts',
      operationId: 'listContacts',
      responses: { 200: { data: listOf('Contact') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'the contacts the session has seen on the network',
      schema: { params: sessionParams, query: paging },
      async handler({ params, query, ctx }) {
        const { items, total } = await contacts.list(params.session, query.limit ?? 1000, query.offset ?? 0);
        return paged(ctx, items, total);
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/contacts/check',
      operationId: 'checkContacts',
      responses: { 200: { data: listOf('ContactCheck') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'whether phone numbers are registered, with their LIDs ({phoneNumbers:[…]} or a bare array)',
      schema: { params: sessionParams, body: checkBody },
      handler({ params, body }) {
        return contacts.check(params.session, Array.isArray(body) ? body : body.phoneNumbers);
      },
    },
    {
      method: 'GET',
      path: CONTACT,
      operationId: 'getContact',
      responses: { 200: { data: ref('Contact') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'a contact (phone number, JID or LID)',
      schema: { params: contactParams },
      handler: ({ params }) => contacts.get(params.session, params.contactId),
    },
    {
      method: 'GET',
      path: `${CONTACT}/picture`,
      operationId: 'getContactPicture',
      responses: { 200: { data: ref('ContactPicture') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'the profile picture URL; 404 PICTURE_NOT_FOUND when none or hidden',
      schema: { params: contactParams },
      handler: ({ params }) => contacts.picture(params.session, params.contactId),
    },
    block('POST', true),
    block('DELETE', false),
  ];
}
