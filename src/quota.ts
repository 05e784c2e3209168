// Shared caps that one caller must not drain: the event streams, the webhooks, the URL downloads. Under each global
// cap every principal (an API key with the keys made from it, a client token's session and ephemeral id) has a quota of its own, and the last
// places are the master key's reserve: whatever the others hold, the master key can still open a stream, register a
// webhook or fetch a URL. (One session-limited key took all 64 streams and all 100 webhooks; a client token filled the
// download pool; the master key was locked out of all three.)
import type { Principal } from './auth/scopes.js';

/**
 * Whose places a principal's are: an API key's are its family's (the keys made from it count with it, as for the rate
 * limit); work done without a caller (the daemon's own) counts as `daemon`.
 */
export function principalId(principal: Principal | undefined): string {
  if (!principal) return 'daemon';
  if (principal.kind === 'master') return 'master';
  if (principal.kind === 'key') return `key:${principal.family}`;
  return `client:${principal.session}:${principal.ephemeralId}`;
}

export interface QuotaLimits {
  /** the global cap */
  max: number;
  /** places one principal other than the master key may hold */
  perPrincipal: number;
  /** places only the master key may take: the others together stop at max − reserve (never below 1) */
  masterReserve: number;
}

/** What is held now: by everyone, by all but the master key, by the principal asking. */
export interface QuotaUse {
  total: number;
  others: number;
  own: number;
}

/**
 * Why a principal may not take one more place; undefined when it may. The master key has no quota of its own and may
 * use the reserve.
 */
export function quotaRefusal(limits: QuotaLimits, principal: Principal | undefined, use: QuotaUse, what: string): string | undefined {
  if (use.total >= limits.max) return `${limits.max} ${what} are in use, the limit`;
  if (principal?.kind === 'master') return undefined;
  if (use.own >= limits.perPrincipal) return `this caller holds ${limits.perPrincipal} ${what} already, its quota`;
  const open = Math.max(1, limits.max - limits.masterReserve);
  return use.others >= open ? `${use.others} ${what} are in use; the rest are kept for the master key` : undefined;
}

/** Places held in memory (streams, downloads), counted per principal. */
export class QuotaCounter {
  private total = 0;
  private readonly held = new Map<string, number>();

  constructor(
    readonly limits: QuotaLimits,
    private readonly what: string,
  ) {}

  /** Why `principal` may not take a place now; undefined when it may. */
  refusal(principal: Principal | undefined): string | undefined {
    const master = this.held.get('master') ?? 0;
    return quotaRefusal(this.limits, principal, { total: this.total, others: this.total - master, own: this.held.get(principalId(principal)) ?? 0 }, this.what);
  }

  /** Takes a place (check `refusal` first); the returned function gives it back, once. */
  take(principal: Principal | undefined): () => void {
    const id = principalId(principal);
    this.total += 1;
    this.held.set(id, (this.held.get(id) ?? 0) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.held.get(id) ?? 1) - 1;
      if (left > 0) this.held.set(id, left);
      else this.held.delete(id);
    };
  }
}
