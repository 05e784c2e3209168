// API keys: creation within the creator's own rights (shown once), listing and revocation of one's own keys,
// authentication of a bearer key, and its optional requests-per-minute limit, counted in one window per key family
// (a key, the keys it made, the keys those made…), so that minting children does not multiply a limit.
import { randomUUID } from 'node:crypto';
import { GatewayError, RateLimitedError, notFound } from '../errors.js';
import type { KeysRepo, ApiKeyRow } from '../store/keys.js';
import type { Principal } from './scopes.js';
import { randomToken, sha256Hex } from './secrets.js';
import { SlidingWindowLimiter } from './sliding-window.js';

export const API_KEY_PREFIX = 'svc_';
export const MAX_RATE_LIMIT_PER_MINUTE = 100_000;
/** keys one API key may have created and not revoked (the operator has no such cap) */
export const MAX_KEYS_PER_KEY = 1000;

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  sessions: string[] | null;
  /** requests a minute; null = unlimited */
  rateLimitPerMinute: number | null;
  /** the operator exempted the key's sends from the send governor */
  governorExempt: boolean;
  /** id of the API key that created this one; null = the operator (master key or /api/admin/keys) */
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreateKeyInput {
  name: string;
  scopes: string[];
  sessions?: string[];
  rateLimitPerMinute?: number | null;
}

/** Who creates, lists or revokes keys: the operator, or an API key (which sees and grants only its own). */
export type KeyOwner = { kind: 'operator' } | Extract<Principal, { kind: 'key' }>;

export const apiKeyView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scopes: row.scopes,
  sessions: row.sessions,
  rateLimitPerMinute: row.rateLimitPerMinute,
  governorExempt: row.governorExempt,
  createdBy: row.createdBy,
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
});

const OPERATOR: KeyOwner = { kind: 'operator' };

export class ApiKeys {
  /** last-used stamps are written at most once a minute per key, off the request's hot path */
  private readonly lastTouched = new Map<string, number>();
  /** principals by key hash (with the id of their family's root), so a busy key costs one hash per request; dropped on revoke */
  private readonly principals = new Map<string, Extract<Principal, { kind: 'key' }>>();
  private readonly limiter = new SlidingWindowLimiter();
  /** told the id of every revoked key (open event streams of that key end) */
  private readonly revokeListeners = new Set<(id: string) => void>();
  private lastSweep = Date.now();
  /** moved on whenever the cached principals are dropped */
  private generation = 0;
  /** in a cluster: tells the other daemons of a revocation made here */
  revokedHere: ((ids: string[]) => void) | undefined;

  constructor(private readonly repo: KeysRepo) {}

  /**
   * Creates a key. An API key may only grant what it holds itself: scopes within its own (`*` only from a `*` key),
   * sessions within its own list (a session-limited creator must give one), and a rate limit no looser than its own.
   */
  async create(input: CreateKeyInput, owner: KeyOwner = OPERATOR): Promise<ApiKeyView & { key: string }> {
    const scopes = [...new Set(input.scopes)];
    const sessions = input.sessions ? [...new Set(input.sessions)] : null;
    let rateLimitPerMinute = input.rateLimitPerMinute ?? null;
    if (owner.kind === 'key') {
      if ((await this.repo.countOwnedBy(owner.id)) >= MAX_KEYS_PER_KEY) {
        throw new GatewayError('LIMIT_REACHED', `this API key has created ${MAX_KEYS_PER_KEY} keys, the most one key may hold; revoke one first`);
      }
      assertScopesWithin(owner, scopes);
      assertSessionsWithin(owner, sessions);
      if (owner.rateLimitPerMinute !== null) {
        if (input.rateLimitPerMinute === undefined) rateLimitPerMinute = owner.rateLimitPerMinute;
        else if (rateLimitPerMinute === null || rateLimitPerMinute > owner.rateLimitPerMinute) {
          throw new GatewayError(
            'FORBIDDEN_SCOPE',
            `this API key is limited to ${owner.rateLimitPerMinute} requests a minute and cannot create a key with a higher or no limit`,
          );
        }
      }
    }
    const key = `${API_KEY_PREFIX}${randomToken(24)}`;
    const row = {
      id: randomUUID(),
      name: input.name,
      hash: sha256Hex(key),
      prefix: key.slice(0, 10),
      scopes,
      sessions,
      createdBy: owner.kind === 'key' ? owner.id : null,
      rateLimitPerMinute,
      createdAt: new Date().toISOString(),
    };
    await this.repo.insert(row);
    return { ...apiKeyView({ ...row, governorExempt: false, lastUsedAt: null }), key };
  }

  /** The operator exempts a key's sends from the send governor (or ends the exemption); its cached principal is dropped. */
  async setGovernorExempt(id: string, exempt: boolean): Promise<ApiKeyView> {
    if (!(await this.repo.setGovernorExempt(id, exempt))) throw notFound('KEY_NOT_FOUND', `API key ${id}`);
    this.forgetPrincipals();
    return apiKeyView((await this.repo.get(id))!);
  }

  /** Every key for the operator; for an API key, only the keys it created. */
  async list(owner: KeyOwner = OPERATOR): Promise<ApiKeyView[]> {
    return (await (owner.kind === 'key' ? this.repo.listOwnedBy(owner.id) : this.repo.list())).map(apiKeyView);
  }

  /** The operator revokes any key; an API key only those it created (others answer KEY_NOT_FOUND, so ids cannot be probed). */
  async revoke(id: string, owner: KeyOwner = OPERATOR): Promise<void> {
    const removed = await (owner.kind === 'key' ? this.repo.deleteOwned(id, owner.id) : this.repo.delete(id));
    if (!removed) throw notFound('KEY_NOT_FOUND', `API key ${id}`);
    this.forgetPrincipals();
    for (const listener of this.revokeListeners) listener(id);
    this.revokedHere?.([id]);
  }

  /**
   * A deleted session leaves the lists of the keys limited to it, so a later session of the same name is not theirs;
   * their open event streams end as on a revoke (they were opened under the old rights).
   */
  async forgetSession(name: string): Promise<void> {
    const ids = await this.repo.forgetSession(name);
    if (!ids.length) return;
    this.forgetPrincipals();
    for (const id of ids) for (const listener of this.revokeListeners) listener(id);
    this.revokedHere?.(ids);
  }

  /** Another daemon sharing the store revoked these keys (or shrank their sessions): they stop working here too. */
  revokedElsewhere(ids: readonly string[]): void {
    this.forgetPrincipals();
    for (const id of ids) for (const listener of this.revokeListeners) listener(id);
  }

  /** Calls `listener` with the id of each key revoked (or whose sessions shrank) from now on; returns the unsubscribe function. */
  onRevoke(listener: (id: string) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  /**
   * The principal of a bearer key given by its SHA-256 digest, or undefined when no key matches; rejects with
   * RATE_LIMITED when the key is over its requests-per-minute limit. A key seen before costs no query: its principal is
   * cached (and the promise is settled already).
   */
  authenticate(bearerDigest: Buffer): Promise<Principal | undefined> {
    const hash = bearerDigest.toString('hex');
    const principal = this.principals.get(hash);
    if (!principal) return this.lookUp(hash);
    try {
      return Promise.resolve(this.admit(principal));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** A key not cached: read from the store, with its family's root, then cached unless a revocation came meanwhile. */
  private async lookUp(hash: string): Promise<Principal | undefined> {
    const generation = this.generation;
    const row = await this.repo.findByHash(hash);
    if (!row) return undefined;
    const principal: Extract<Principal, { kind: 'key' }> = {
      kind: 'key',
      id: row.id,
      family: await this.familyRoot(row),
      name: row.name,
      scopes: new Set(row.scopes),
      sessions: row.sessions,
      rateLimitPerMinute: row.rateLimitPerMinute,
      ...(row.governorExempt ? { governorExempt: true } : {}),
    };
    if (generation === this.generation) {
      if (this.principals.size >= 10_000) this.principals.clear();
      this.principals.set(hash, principal);
    }
    return this.admit(principal);
  }

  /** Counts the request against the key family's limit (throws RATE_LIMITED), and stamps its use at most once a minute. */
  private admit(principal: Extract<Principal, { kind: 'key' }>): Principal {
    const { id, family } = principal;
    const now = Date.now();
    if (principal.rateLimitPerMinute !== null) this.limit(family, principal.rateLimitPerMinute, now);
    if ((this.lastTouched.get(id) ?? 0) < now - 60_000) {
      this.lastTouched.set(id, now);
      // staged into the tick: the request does not wait for it
      this.repo.touch(id, new Date(now).toISOString());
    }
    return principal;
  }

  /** Drops every cached principal (a key was revoked or lost sessions); lookups under way do not cache theirs. */
  private forgetPrincipals(): void {
    this.generation += 1;
    this.principals.clear();
  }

  /**
   * The id the key's family is counted under: its topmost creator (an operator-made key), or the id of the first
   * creator in the chain that was revoked since (its remaining descendants still share one window).
   */
  private async familyRoot(row: ApiKeyRow): Promise<string> {
    const seen = new Set([row.id]);
    let root = row.id;
    let parent = row.createdBy;
    while (parent !== null && !seen.has(parent)) {
      seen.add(parent);
      root = parent;
      parent = (await this.repo.get(parent))?.createdBy ?? null;
    }
    return root;
  }

  /** One request of a key limited to `perMinute`, counted in its family's window against its own limit. */
  private limit(family: string, perMinute: number, now: number): void {
    if (now - this.lastSweep > 60_000) {
      this.lastSweep = now;
      this.limiter.sweep(now);
    }
    const hit = this.limiter.hit(family, perMinute, now);
    if (!hit.allowed) {
      throw new RateLimitedError(
        'RATE_LIMITED',
        `this API key is limited to ${perMinute} requests a minute, counted together with the keys it was made from and those made from them`,
        hit.retryAfterSeconds,
      );
    }
  }
}

const holds = (owner: Extract<Principal, { kind: 'key' }>, scope: string): boolean => owner.scopes.has('*') || owner.scopes.has(scope);

function assertScopesWithin(owner: Extract<Principal, { kind: 'key' }>, scopes: readonly string[]): void {
  for (const scope of scopes) {
    const allowed = scope === '*' ? owner.scopes.has('*') : holds(owner, scope);
    if (!allowed) throw new GatewayError('FORBIDDEN_SCOPE', `this API key cannot grant the ${scope} scope: it does not hold it`);
  }
}

function assertSessionsWithin(owner: Extract<Principal, { kind: 'key' }>, sessions: readonly string[] | null): void {
  if (owner.sessions === null) return;
  if (sessions === null) {
    throw new GatewayError(
      'FORBIDDEN_SESSION',
      `this API key is limited to sessions ${owner.sessions.join(', ')}: give "sessions" within them`,
    );
  }
  const outside = sessions.find((s) => !owner.sessions!.includes(s));
  if (outside !== undefined) throw new GatewayError('FORBIDDEN_SESSION', `this API key cannot grant session ${outside}: it may not use it`);
}
