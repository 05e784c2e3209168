// API-key scopes of DESIGN §3 and the check of a principal against a route's scope and session.
import { GatewayError } from '../errors.js';

export const SCOPES = [
  'sessions:read',
  'sessions:manage',
  'messages:send',
  'chats:manage',
  'contacts:read',
  'media:read',
  'webhooks:manage',
  'keys:manage',
  'audit:read',
  '*',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: the master key, a scoped API key, or (client-token issue) a browser token. */
export type Principal =
  | { kind: 'master' }
  | {
      kind: 'key';
      id: string;
      /** the id of the key's family root (ApiKeys.familyRoot): keys made from keys share its rate limit and quotas */
      family: string;
      name: string;
      scopes: ReadonlySet<string>;
      sessions: readonly string[] | null;
      /** requests a minute; null = unlimited */
      rateLimitPerMinute: number | null;
      /** the operator exempted this key's sends from the send governor */
      governorExempt?: boolean;
    }
  | { kind: 'client'; session: string; ephemeralId: string; tokenId: string };

/** What a route demands: none (public), the master key alone, any key (master or API key, no scope), or a scope. */
export type RouteAccess = 'public' | 'master' | 'key' | Scope;

export function assertAccess(principal: Principal, access: RouteAccess, session: string | undefined): void {
  if (access === 'public' || principal.kind === 'master') return;
  if (principal.kind === 'client') throw new GatewayError('ACTION_NOT_ALLOWED', 'client tokens cannot call this route');
  if (access === 'key') return;
  if (access === 'master') throw new GatewayError('FORBIDDEN_SCOPE', 'this route needs the master key');
  if (!principal.scopes.has('*') && !principal.scopes.has(access)) {
    throw new GatewayError('FORBIDDEN_SCOPE', `this API key lacks the ${access} scope`);
  }
  if (session !== undefined && principal.sessions && !principal.sessions.includes(session)) {
    throw new GatewayError('FORBIDDEN_SESSION', `this API key may not use session ${session}`);
  }
}
