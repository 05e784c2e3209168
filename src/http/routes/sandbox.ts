// Sandbox control routes (DESIGN §6): the simulated phone and network act on a sandbox session.
import { GatewayError } from '../../errors.js';
import { isSandboxSession, type SandboxSession } from '../../engine/sandbox/index.js';
import { phoneDigits } from '../../engine/jid.js';
import type { SessionManager } from '../../sessions/manager.js';
import { sessionParams } from '../schemas/common.js';
import { disconnectBody, pairBody } from '../schemas/sandbox.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function sandboxSession(sessions: SessionManager, name: string): SandboxSession {
  if (sessions.engineOf(name) !== 'sandbox') throw new GatewayError('SANDBOX_ONLY', `session ${name} does not run on the sandbox engine`);
  const engine = sessions.running(name);
  if (!isSandboxSession(engine)) throw new GatewayError('SANDBOX_ONLY', `session ${name} does not run on the sandbox engine`);
  return engine;
}

export function sandboxRoutes({ sessions }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/pair',
      access: 'master',
      summary: 'the simulated phone scans the QR (or enters the pairing code)',
      schema: { params: sessionParams, body: pairBody },
      handler({ params, body }) {
        const sandbox = sandboxSession(sessions, params.session);
        let digits: string | undefined;
        if (body?.phoneNumber !== undefined) {
          digits = phoneDigits(body.phoneNumber) ?? undefined;
          if (!digits) throw new GatewayError('VALIDATION_FAILED', 'phoneNumber is not a valid E.164 number', [{ path: '/phoneNumber', message: 'is not a valid E.164 number' }]);
        }
        sandbox.pair({ ...(body ?? {}), phoneNumber: digits });
        return done(`session ${params.session} paired`);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/disconnect',
      access: 'master',
      summary: 'the network drops the session with a status reason',
      schema: { params: sessionParams, body: disconnectBody },
      handler({ params, body }) {
        sandboxSession(sessions, params.session).drop(body.reason);
        return done(`session ${params.session} dropped with ${body.reason}`);
      },
    },
  ];
}
