// Phone number ↔ LID identities (issue 30): one person's pair by phone number, phone JID or LID, and a bounded batch.
import { IDENTITY_LOOKUP_MAX } from '../../chats/identities.js';
import { personId, sessionName } from '../schemas/common.js';
import { ref } from '../schemas/resources.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const ids = { type: 'array', minItems: 1, maxItems: IDENTITY_LOOKUP_MAX, items: personId, description: `phone numbers (E.164), phone JIDs or LIDs; at most ${IDENTITY_LOOKUP_MAX}` } as const;

export function identityRoutes({ identities }: Services): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/sessions/:session/contacts/:contactId/identity',
      operationId: 'getContactIdentity',
      responses: { 200: { data: ref('Identity') } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: 'the phone number and LID of a person (by phone number, phone JID or LID); 404 IDENTITY_NOT_FOUND when unknown',
      description:
        'From the pairs the session learnt and its contacts; a phone number they lack is asked of the network (a number check) when the session is connected. The network tells no number behind a LID: an unknown LID is a 404 until the person writes or the number is looked up.',
      schema: { params: { type: 'object', required: ['session', 'contactId'], properties: { session: sessionName, contactId: personId } } },
      example: { data: { id: '15550001111@s.whatsapp.net', jid: '15550001111@s.whatsapp.net', phoneNumber: '+15550001111', lid: '123456789012345@lid', source: 'message', learntAt: '2026-01-01T11:00:00.000Z', seenAt: '2026-01-01T12:00:00.000Z' } },
      handler: ({ params }) => identities.get(params.session, params.contactId),
    },
    {
      method: 'POST',
      path: '/api/sessions/:session/identities/lookup',
      operationId: 'lookupIdentities',
      responses: { 200: { data: { type: 'array', items: { oneOf: [ref('Identity'), { type: 'null' }] }, description: 'one item per id, in the order asked; null when the pair is not known' } } },
      access: 'contacts:read',
      sessionFrom: 'params',
      summary: `the phone number ↔ LID pairs of up to ${IDENTITY_LOOKUP_MAX} people ({ids:[…]}); null for those not known`,
      description:
        'The stored pairs first; the phone numbers they lack are asked of the network in one number check when the session is connected (otherwise they are null). LIDs are answered from the stored pairs only.',
      schema: {
        params: { type: 'object', required: ['session'], properties: { session: sessionName } },
        body: { type: 'object', additionalProperties: false, required: ['ids'], properties: { ids } },
      },
      example: { body: { ids: ['+15550001111', '123456789012345@lid'] } },
      handler: ({ params, body }) => identities.lookup(params.session, body.ids),
    },
  ];
}
