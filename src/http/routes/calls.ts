// Call routes: reject a call that rings. Each session's call policy (config.calls) is src/calls/service.ts.
import { emptyBody } from '../schemas/common.js';
import { callParams } from '../schemas/calls.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export function callRoutes({ calls }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/sessions/:session/calls/:callId/reject',
      operationId: 'rejectCall',
      responses: { 200: { data: ref('Done') } },
      access: 'chats:manage',
      sessionFrom: 'params',
      summary: 'reject an incoming call that still rings (the caller sees it declined); call.rejected follows with endedBy `gateway`',
      description:
        'The call is one a call.received event reported lately (the session remembers its last 500 calls, and ringing ones for 3 minutes at most). 404 `CALL_NOT_FOUND` for a call the session does not know, 409 `CALL_ENDED` for one that was answered, declined, missed or rejected already.',
      schema: { params: callParams, body: emptyBody },
      async handler({ params }) {
        await calls.reject(params.session, params.callId, 'gateway');
        return done(`call ${params.callId} rejected`);
      },
    },
  ];
}
