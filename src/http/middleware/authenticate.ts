// Resolves the caller from `Authorization: Bearer …` into ctx.state.principal (master key or API key); 401 otherwise.
import { GatewayError } from '../../errors.js';
import type { ApiKeys } from '../../auth/api-keys.js';
import type { Principal } from '../../auth/scopes.js';
import { digestsEqual, sha256 } from '../../auth/secrets.js';
import { CLIENT_TOKEN_PREFIX } from '../../auth/client-tokens.js';
import type { AppState } from '../types.js';

export interface Authenticators {
  /** SHA-256 of the master key, computed once: a request then costs one hash, of its own bearer */
  masterKeyDigest: Buffer;
  apiKeys: ApiKeys;
  /** client tokens (svc_ct_…), installed by the client-token module */
  clientToken?: (token: string) => Promise<Principal>;
}


export function bearerOf(header: string): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export async function resolvePrincipal(header: string, auth: Authenticators): Promise<Principal | undefined> {
  const bearer = bearerOf(header);
  if (!bearer) return undefined;
  if (bearer.startsWith(CLIENT_TOKEN_PREFIX)) {
    if (!auth.clientToken) throw new GatewayError('TOKEN_INVALID', 'client tokens are not accepted by this daemon');
    return auth.clientToken(bearer);
  }
  const digest = sha256(bearer);
  if (digestsEqual(digest, auth.masterKeyDigest)) return { kind: 'master' };
  return auth.apiKeys.authenticate(digest);
}

/** Authenticates lazily: the router calls `requirePrincipal` only for routes that are not public. */
export async function requirePrincipal(ctx: { get(name: string): string; state: AppState }, auth: Authenticators): Promise<Principal> {
  if (ctx.state.principal) return ctx.state.principal;
  const header = ctx.get('Authorization');
  if (!header) throw new GatewayError('UNAUTHORIZED', 'missing Authorization: Bearer <key> header');
  const principal = await resolvePrincipal(header, auth);
  if (!principal) throw new GatewayError('UNAUTHORIZED', 'unknown or malformed API key');
  ctx.state.principal = principal;
  return principal;
}
