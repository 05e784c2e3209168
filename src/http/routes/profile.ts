// The session's own profile picture (issue 19): set from an HTTPS URL or base64, or remove it. It is read like any
// contact's, with the session's own number (GET …/contacts/{id}/picture).
import { checkBodySession } from '../../chats/ids.js';
import { emptyBody, sessionParams } from '../schemas/common.js';
import { pictureBody, PICTURE_RULES } from '../schemas/groups.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

const PICTURE = '/api/sessions/:session/profile/picture';

export function profileRoutes({ profile }: Services): RouteDef[] {
  return [
    {
      method: 'PUT',
      path: PICTURE,
      operationId: 'setProfilePicture',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: "set the session's own profile picture from an HTTPS URL or base64 (JPEG or PNG, ≤ 5 MB)",
      schema: { params: sessionParams, body: pictureBody },
      rulesBeyondSchema: PICTURE_RULES,
      bodyLimit: 'media',
      async handler({ params, body, ctx }) {
        if (body.session !== undefined) checkBodySession(params.session, body.session);
        await profile.setPicture(params.session, body, ctx.state.principal);
        return done('profile picture updated');
      },
    },
    {
      method: 'DELETE',
      path: PICTURE,
      operationId: 'removeProfilePicture',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: "remove the session's own profile picture",
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        await profile.removePicture(params.session);
        return done('profile picture removed');
      },
    },
  ];
}
