// Client tokens: `svc_ct_` + an HS256 JWT (jose) scoped to one session and one ephemeral id; minting and verification.
import { randomBytes, randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { TokenEpoch } from '../store/client-rules.js';
import type { SettingsRepo } from '../store/settings.js';
import type { Principal } from './scopes.js';

export const CLIENT_TOKEN_PREFIX = 'svc_ct_';
const SECRET_SETTING = 'clientTokens.signingSecret';
const ISSUER = 'session-gateway';

let joseModule: Promise<typeof import('jose')> | undefined;
/** jose loads with the first token minted or checked: a daemon whose apps use only API keys never needs it */
export const jose = () => (joseModule ??= import('jose'));

export interface MintedToken {
  token: string;
  expiresAt: string;
  session: string;
  ephemeralId: string;
}

export interface ClientTokenClaims {
  session: string;
  ephemeralId: string;
  tokenId: string;
  epoch: number;
  /** the creation time (ms) of the session the token was minted for */
  incarnation: number;
}

export class ClientTokens {
  /** tokens already verified, until they expire: a page's repeated calls skip the signature check */
  private readonly verified = new Map<string, { claims: ClientTokenClaims; expiresAtMs: number }>();

  /** Reads the signing secret (made and stored on first use) and makes the minter and verifier. */
  static async open(settings: SettingsRepo, epochOf: (session: string) => Promise<TokenEpoch | undefined>): Promise<ClientTokens> {
    // daemons sharing one store (a cluster) that start together keep the first secret written
    const secret = (await settings.get<string>(SECRET_SETTING)) ?? (await settings.setIfAbsent(SECRET_SETTING, randomBytes(32).toString('base64url')));
    return new ClientTokens(Buffer.from(secret, 'base64url'), epochOf);
  }

  constructor(
    private readonly key: Uint8Array,
    /** the session's current epoch and incarnation; undefined when there is no such session */
    private readonly epochOf: (session: string) => Promise<TokenEpoch | undefined>,
  ) {}

  async mint(session: string, ephemeralId: string, ttlSeconds: number): Promise<MintedToken> {
    const current = await this.epochOf(session);
    if (current === undefined) throw new GatewayError('SESSION_NOT_FOUND', `session ${session} not found`);
    const issuedAt = Math.floor(Date.now() / 1000);
    const { SignJWT } = await jose();
    const jwt = await new SignJWT({ sid: session, eph: ephemeralId, gen: current.epoch, inc: current.incarnation })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .sign(this.key);
    return { token: CLIENT_TOKEN_PREFIX + jwt, expiresAt: new Date((issuedAt + ttlSeconds) * 1000).toISOString(), session, ephemeralId };
  }

  /** Verifies signature (HS256 only), expiry, epoch and session incarnation; the rules themselves are checked per request. */
  async verify(token: string): Promise<ClientTokenClaims> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAtMs > Date.now() && (await this.isCurrent(known.claims))) return known.claims;
      this.verified.delete(token);
    }
    const claims = await this.verifySignature(token);
    if (this.verified.size >= 10_000) this.verified.clear();
    return claims;
  }

  private async verifySignature(token: string): Promise<ClientTokenClaims> {
    if (!token.startsWith(CLIENT_TOKEN_PREFIX)) throw new GatewayError('TOKEN_INVALID', 'not a client token');
    const { errors: joseErrors, jwtVerify } = await jose();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token.slice(CLIENT_TOKEN_PREFIX.length), this.key, { algorithms: ['HS256'], issuer: ISSUER }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new GatewayError('TOKEN_EXPIRED', 'the client token has expired; mint a new one');
      throw new GatewayError('TOKEN_INVALID', 'the client token is invalid (bad signature, algorithm or format)');
    }
    const { sid, eph, gen, inc, jti, exp } = payload;
    if (typeof sid !== 'string' || typeof eph !== 'string' || typeof gen !== 'number' || typeof inc !== 'number' || typeof jti !== 'string') {
      throw new GatewayError('TOKEN_INVALID', 'the client token lacks its session, ephemeral id, epoch or session incarnation');
    }
    const claims = { session: sid, ephemeralId: eph, tokenId: jti, epoch: gen, incarnation: inc };
    if (!(await this.isCurrent(claims))) {
      throw new GatewayError('TOKEN_INVALID', 'the client token was revoked (its session\'s client rules were deleted, or the session was deleted or re-created)');
    }
    this.verified.set(token, { claims, expiresAtMs: (exp as number) * 1000 });
    return claims;
  }

  /** the token was minted for the session as it is now: same incarnation (not deleted and re-created), same epoch */
  private async isCurrent(claims: ClientTokenClaims): Promise<boolean> {
    const current = await this.epochOf(claims.session);
    return current !== undefined && current.epoch === claims.epoch && current.incarnation === claims.incarnation;
  }

  async principal(token: string): Promise<Principal> {
    const claims = await this.verify(token);
    return { kind: 'client', session: claims.session, ephemeralId: claims.ephemeralId, tokenId: claims.tokenId };
  }
}
