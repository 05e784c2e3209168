// Idempotent sends: a POST that sends, given `Idempotency-Key`, runs at most once per key and caller within 24 hours.
// The key is claimed (and committed) before the handler runs; a retry meanwhile is told it is in flight, a retry after
// gets the first answer again, and a request that may have sent before it failed leaves its key marked unknown, so a
// retry is refused rather than sent twice. A request that failed before sending anything gives its key up.
import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../auth/scopes.js';
import { GatewayError, ValidationError } from '../errors.js';
import type { IdempotencyRepo } from '../store/idempotency.js';
import { errorStatus } from './error-status.js';
import { toGatewayError } from './middleware/errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** printable ASCII, as in the IETF draft's examples (UUIDs, ULIDs, random tokens) */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** a previous run's pending request younger than this may still be running on another node */
const ANOTHER_NODE_MAY_RUN_IT_MS = 120_000;

export interface IdempotentRequest {
  method: string;
  path: string;
  body: unknown;
  variant: string;
}

/** What a request gets from `begin`: the first answer again, or the key, held until `end`. */
export type IdempotentStart =
  | { replay: true; status: number; data: unknown }
  | { replay: false; end(outcome: { status: number; data: unknown } | { error: unknown }): Promise<void> };

export class IdempotentRequests {
  /** this daemon run: a pending key of another run was left by a stopped daemon, or is another node's */
  private readonly runId = randomUUID();
  /** the keys this run's requests hold now: a pending key of this run not among them lost its outcome with its tick */
  private readonly running = new Set<string>();

  constructor(
    private readonly repo: IdempotencyRepo,
    /** settles once the writes made so far are committed */
    private readonly committed: () => Promise<void> | undefined,
  ) {}

  /** Checks the key, then claims it or returns the first answer; throws 409s for a key in use, reused or unknown. */
  async begin(principal: Principal | undefined, key: string, request: IdempotentRequest): Promise<IdempotentStart> {
    if (!KEY_PATTERN.test(key)) throw ValidationError.field('/Idempotency-Key', 'must be 1 to 255 printable ASCII characters without spaces');
    const scope = scopeOf(principal);
    const fingerprint = fingerprintOf(request);
    const now = Date.now();
    const outcome = await this.repo.claim(scope, key, fingerprint, this.runId, now, now + IDEMPOTENCY_TTL_MS);
    if (outcome.claimed) {
      // the claim must outlive a crash of what follows, or a retry after the crash would send again
      const held = `${scope}\u0000${key}`;
      this.running.add(held);
      try {
        await this.committed();
      } catch (err) {
        this.running.delete(held);
        throw err;
      }
      return {
        replay: false,
        end: (result) => this.end(scope, key, result).finally(() => this.running.delete(held)),
      };
    }
    const record = outcome.record;
    if (!record) throw new GatewayError('IDEMPOTENCY_KEY_IN_FLIGHT', 'a request with this Idempotency-Key is being processed; retry in a moment');
    if (record.fingerprint !== fingerprint) {
      throw new GatewayError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request in the last 24 hours; use a new key for a new request');
    }
    if (record.state === 'done') return { replay: true, status: record.status ?? 200, data: JSON.parse(record.answer ?? 'null') };
    const runningHere = record.runId === this.runId && this.running.has(`${scope}\u0000${key}`);
    if (record.state === 'pending' && (runningHere || (record.runId !== this.runId && now - record.createdAt < ANOTHER_NODE_MAY_RUN_IT_MS))) {
      throw new GatewayError('IDEMPOTENCY_KEY_IN_FLIGHT', 'a request with this Idempotency-Key is being processed; retry in a moment');
    }
    throw new GatewayError(
      'IDEMPOTENCY_OUTCOME_UNKNOWN',
      'the request with this Idempotency-Key ended without an answer (it failed, or the daemon stopped) after it may have sent; check the chat before sending again with a new key',
    );
  }

  /** The first answer of this very request under this key, when it has one; reads only, claims nothing. */
  async replayOf(principal: Principal | undefined, key: string, request: IdempotentRequest): Promise<{ status: number; data: unknown } | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined;
    const record = await this.repo.find(scopeOf(principal), key, Date.now());
    if (record?.state !== 'done' || record.fingerprint !== fingerprintOf(request)) return undefined;
    return { status: record.status ?? 200, data: JSON.parse(record.answer ?? 'null') };
  }

  async pruneExpired(): Promise<number> {
    return this.repo.pruneExpired(Date.now());
  }

  private async end(scope: string, key: string, result: { status: number; data: unknown } | { error: unknown }): Promise<void> {
    if (!('error' in result)) return this.repo.finish(scope, key, this.runId, 'done', result.status, JSON.stringify(result.data ?? null));
    // a refusal (4xx), or a busy or rate-limited daemon, sent nothing: a retry may run it; any other failure may have come
    // after the send
    const status = errorStatus[toGatewayError(result.error).code];
    if (status < 500 || status === 503) return this.repo.release(scope, key, this.runId);
    return this.repo.finish(scope, key, this.runId, 'unknown', status, null);
  }
}

/** what was asked: the same key for another request is a reuse */
function fingerprintOf(request: IdempotentRequest): string {
  return createHash('sha256').update(`${request.method} ${request.path} ${request.variant}\n${JSON.stringify(request.body ?? null)}`).digest('hex');
}

/** whose keys these are: keys are kept apart per caller, so one caller cannot read another's answers */
function scopeOf(principal: Principal | undefined): string {
  if (!principal || principal.kind === 'master') return 'master';
  if (principal.kind === 'key') return `key:${principal.id}`;
  return `client:${principal.session}:${principal.ephemeralId}`;
}
