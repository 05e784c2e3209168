// Client rules: their validation and storage, and their enforcement on every request that carries a client token.
import { secondsUntilUtcMidnight } from '../timestamp.js';
import { GatewayError, RateLimitedError } from '../errors.js';
import { normalizeJid } from '../engine/jid.js';
import type { ClientRulesRepo, ClientRulesRow, RecipientMode } from '../store/client-rules.js';
import { actionOfRoute, CAPPED_ACTIONS, CLIENT_ACTIONS, SENDING_ACTIONS, type ClientAction } from './client-actions.js';
import type { Principal } from './scopes.js';
import { SlidingWindowLimiter } from './sliding-window.js';
import type { Logger } from '../logger.js';

export interface ClientRulesInput {
  recipientMode: string;
  enabled?: boolean;
  allowedActions?: string;
  rateLimitPerMinute?: number;
  dailySendCap?: number;
  allowedOrigins?: string;
}

export interface ClientRulesView {
  session: string;
  recipientMode: RecipientMode;
  enabled: boolean;
  allowedActions: string;
  rateLimitPerMinute: number;
  dailySendCap: number;
  allowedOrigins: string;
  updatedAt: string;
}

export const rulesView = (row: ClientRulesRow): ClientRulesView => ({
  session: row.session,
  recipientMode: row.recipientMode,
  enabled: row.enabled,
  allowedActions: row.allowedActions.join(','),
  rateLimitPerMinute: row.rateLimitPerMinute,
  dailySendCap: row.dailySendCap,
  allowedOrigins: row.allowedOrigins.join(','),
  updatedAt: row.updatedAt,
});

/** What the enforcement needs to know about a request, independent of HTTP. */
export interface ClientRequest {
  method: string;
  routePath: string;
  /** the session the route acts on (path or body) */
  session: string | undefined;
  /** target chat of sending actions */
  chatId: string | undefined;
  origin: string | undefined;
}

/** A send taken from the daily cap before the handler runs; released when the handler fails. */
export interface ClientGrant {
  release(): void;
}

export const RECIPIENT_MODES = ['none', 'conversation', 'any'];

export class ClientRules {
  private readonly limiter: SlidingWindowLimiter;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly repo: ClientRulesRepo,
    private readonly hasWrittenTo: (session: string, jid: string) => boolean | Promise<boolean>,
    rateWindowSeconds = 60,
    /** where a write that nobody waits for reports its failure (the daily prune, a send given back) */
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {
    this.limiter = new SlidingWindowLimiter(rateWindowSeconds * 1000);
    this.sweeper = setInterval(() => {
      this.limiter.sweep();
      // the store may be out of reach (a cluster's database): the next sweep prunes
      this.repo.pruneDailyBefore(utcDay(Date.now() - 2 * 86_400_000)).catch((err: unknown) => this.logger?.warn({ err }, 'could not prune the daily client send counts'));
    }, 60_000);
    this.sweeper.unref();
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  async get(session: string): Promise<ClientRulesView> {
    const row = await this.repo.get(session);
    if (!row) throw new GatewayError('CLIENT_RULES_NOT_FOUND', `session ${session} has no client rules`);
    return rulesView(row);
  }

  async put(session: string, input: ClientRulesInput): Promise<ClientRulesView> {
    const row: ClientRulesRow = {
      session,
      recipientMode: parseRecipientMode(input.recipientMode),
      enabled: input.enabled ?? true,
      allowedActions: parseActions(input.allowedActions ?? ''),
      rateLimitPerMinute: input.rateLimitPerMinute ?? 0,
      dailySendCap: input.dailySendCap ?? 0,
      allowedOrigins: parseOrigins(input.allowedOrigins ?? ''),
      updatedAt: new Date().toISOString(),
    };
    await this.repo.put(row);
    return rulesView(row);
  }

  /** the session itself was deleted */
  forget(session: string): void {
    this.repo.forget(session);
  }

  async delete(session: string): Promise<void> {
    if (!(await this.repo.delete(session))) throw new GatewayError('CLIENT_RULES_NOT_FOUND', `session ${session} has no client rules`);
  }

  /** For CORS: may `origin` call routes of `session` (or, with no session known, of any session)? */
  async originAllowed(origin: string, session: string | undefined): Promise<boolean> {
    const candidates = session ? [await this.repo.get(session)].filter((r): r is ClientRulesRow => r !== undefined) : await this.repo.all();
    return candidates.some((rules) => rules.enabled && (rules.allowedOrigins.length === 0 || rules.allowedOrigins.includes(origin)));
  }

  /**
   * The checks that need no request body (rules, enabled, origin, route, allowed action, and the session when the path
   * names it), then the rate limit, which counts the request: run before the body is read, so a token is never made to
   * wait for, nor allowed to send, a body it may not send; enforce repeats the checks but does not count again.
   */
  async admit(
    principal: Extract<Principal, { kind: 'client' }>,
    request: Pick<ClientRequest, 'method' | 'routePath' | 'origin'> & { pathSession?: string },
  ): Promise<{ rules: ClientRulesRow; action: ClientAction }> {
    const admitted = await this.check(principal, request);
    const { rules } = admitted;
    if (rules.rateLimitPerMinute > 0) {
      const verdict = this.limiter.hit(`${principal.session}\u0000${principal.ephemeralId}`, rules.rateLimitPerMinute);
      if (!verdict.allowed) throw new RateLimitedError('RATE_LIMITED', `more than ${rules.rateLimitPerMinute} requests a minute for this ephemeralId`, verdict.retryAfterSeconds);
    }
    return admitted;
  }

  private async check(
    principal: Extract<Principal, { kind: 'client' }>,
    request: Pick<ClientRequest, 'method' | 'routePath' | 'origin'> & { pathSession?: string },
  ): Promise<{ rules: ClientRulesRow; action: ClientAction }> {
    const rules = await this.repo.get(principal.session);
    if (!rules) throw new GatewayError('NO_CLIENT_RULES', `session ${principal.session} has no client rules; client tokens are refused`);
    if (!rules.enabled) throw new GatewayError('CLIENT_ACCESS_DISABLED', `client access to session ${principal.session} is disabled`);
    if (rules.allowedOrigins.length && (!request.origin || !rules.allowedOrigins.includes(request.origin))) {
      throw new GatewayError('ORIGIN_NOT_ALLOWED', request.origin ? `origin ${request.origin} is not allowed` : 'requests without an Origin header are not allowed');
    }
    const action = actionOfRoute(request.method, request.routePath);
    if (!action) throw new GatewayError('ACTION_NOT_ALLOWED', `client tokens cannot call ${request.method} ${request.routePath}`);
    if (!rules.allowedActions.includes(action)) throw new GatewayError('ACTION_NOT_ALLOWED', `action ${action} is not in this session's allowedActions`);
    if (request.pathSession !== undefined) this.assertSession(principal, request.pathSession);
    return { rules, action };
  }

  /**
   * The checks of SPEC §5 and §7 in order; throws the refusal. For a capped send it reserves the send in the
   * daily count before the handler runs (so parallel requests cannot all pass a cap they see as not yet
   * reached) and returns the grant to release when the send fails, so that only successful sends count.
   */
  async enforce(principal: Extract<Principal, { kind: 'client' }>, request: ClientRequest): Promise<ClientGrant | undefined> {
    // the rate limit counted the request in admit, before its body was read
    const { rules, action } = await this.check(principal, request);
    this.assertSession(principal, request.session);
    if (SENDING_ACTIONS.has(action)) await this.checkRecipient(rules, action, request.chatId);

    // the daily cap checks and takes a slot in one statement (reserveDailySend), so no other request of the same
    // ephemeralId can slip in between the check and the count
    if (!CAPPED_ACTIONS.has(action) || rules.dailySendCap === 0) return undefined;
    const now = Date.now();
    const day = utcDay(now);
    if (!(await this.repo.reserveDailySend(principal.session, principal.ephemeralId, day, rules.dailySendCap))) {
      throw new RateLimitedError('DAILY_CAP_REACHED', `the daily cap of ${rules.dailySendCap} sends for this ephemeralId is reached`, secondsUntilUtcMidnight(now));
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        // the store may be out of reach: the send then stays counted (the cap errs on the side of fewer sends)
        this.repo
          .releaseDailySend(principal.session, principal.ephemeralId, day)
          .catch((err: unknown) => this.logger?.warn({ err, session: principal.session }, 'could not give back a send of the daily cap'));
      },
    };
  }

  private assertSession(principal: Extract<Principal, { kind: 'client' }>, session: string | undefined): void {
    if (session !== principal.session) {
      throw new GatewayError('SESSION_MISMATCH', `this token is for session ${principal.session}, not ${session ?? '(none)'}`);
    }
  }

  private async checkRecipient(rules: ClientRulesRow, action: ClientAction, chatId: string | undefined): Promise<void> {
    if (rules.recipientMode === 'any') return;
    if (rules.recipientMode === 'none') throw new GatewayError('RECIPIENT_NOT_ALLOWED', `recipientMode none: client tokens may only read (${action} refused)`);
    const jid = chatId ? normalizeJid(chatId) : null;
    if (!jid || !(await this.hasWrittenTo(rules.session, jid))) {
      throw new GatewayError('RECIPIENT_NOT_ALLOWED', `recipientMode conversation: ${chatId ?? 'the recipient'} has not written to this session`);
    }
  }
}

function parseRecipientMode(mode: string): RecipientMode {
  if (mode === 'verified') throw new GatewayError('INVALID_RECIPIENT_MODE', 'recipientMode verified is reserved and not available yet', [{ path: '/recipientMode', message: 'verified is not available yet' }]);
  if (!RECIPIENT_MODES.includes(mode)) {
    throw new GatewayError('INVALID_RECIPIENT_MODE', `recipientMode must be one of ${RECIPIENT_MODES.join(', ')}`, [{ path: '/recipientMode', message: `must be one of ${RECIPIENT_MODES.join(', ')}` }]);
  }
  return mode as RecipientMode;
}

function parseActions(csv: string): string[] {
  const actions = [...new Set(csv.split(',').map((a) => a.trim()).filter(Boolean))];
  const unknown = actions.filter((a) => !(CLIENT_ACTIONS as readonly string[]).includes(a));
  if (unknown.length) {
    throw new GatewayError('VALIDATION_FAILED', `unknown actions: ${unknown.join(', ')} (known: ${CLIENT_ACTIONS.join(', ')})`, [{ path: '/allowedActions', message: `unknown: ${unknown.join(', ')}` }]);
  }
  return actions;
}

function parseOrigins(csv: string): string[] {
  const origins = [...new Set(csv.split(',').map((o) => o.trim()).filter(Boolean))];
  return origins.map((origin) => {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin.replace(/\/$/, '')) {
      throw new GatewayError('VALIDATION_FAILED', `allowedOrigins: ${origin} is not an origin like https://app.example.com`, [{ path: '/allowedOrigins', message: `${origin} is not an origin (scheme://host[:port])` }]);
    }
    return url.origin;
  });
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

