// The send governor's rules (issue 31): a session's policy (the gateway's defaults, the session's config.governor and
// its safeMode alias), its pace (a bucket of `burst` sends refilled `perMinute` a minute, with jitter on waits), the
// minimum gap between two sends to one chat, and the daily cap on first messages to people who never wrote, lower on a
// session's first days (the warm-up ladder). Time comes from an injected clock, chance from an injected random source.
import type { GovernorConfig } from '../config/types.js';
import type { Principal } from '../auth/scopes.js';
import { DAY_MS, utcDayStart } from '../timestamp.js';

export { DAY_MS, utcDayStart };

/** What a session's sends are held to. */
export interface GovernorPolicy {
  /** the session is not governed (the operator exempted it, or the governor is off) */
  exempt: boolean;
  perMinute: number;
  burst: number;
  jitterPercent: number;
  recipientGapSeconds: number;
  firstContactsPerDay: number;
  warmup: readonly number[];
  typing: boolean;
}

/** The settings a session may override in config.governor (`exempt` only with the master key). */
export const SESSION_GOVERNOR_KEYS = ['exempt', 'perMinute', 'burst', 'jitterPercent', 'recipientGapSeconds', 'firstContactsPerDay', 'warmup', 'typing'] as const;
export type SessionGovernorConfig = Partial<Pick<GovernorPolicy, (typeof SESSION_GOVERNOR_KEYS)[number]>>;

/** The policy of a session from the gateway's settings and the session's config (config.safeMode: the typing switch). */
export function policyOf(defaults: GovernorConfig, config: Record<string, unknown>): GovernorPolicy {
  const own = (config.governor ?? {}) as SessionGovernorConfig;
  return {
    exempt: !defaults.enabled || own.exempt === true,
    perMinute: own.perMinute ?? defaults.perMinute,
    burst: own.burst ?? defaults.burst,
    jitterPercent: own.jitterPercent ?? defaults.jitterPercent,
    recipientGapSeconds: own.recipientGapSeconds ?? defaults.recipientGapSeconds,
    firstContactsPerDay: own.firstContactsPerDay ?? defaults.firstContactsPerDay,
    warmup: own.warmup ?? defaults.warmup,
    typing: own.typing ?? (config.safeMode === true ? true : defaults.typing),
  };
}

/**
 * The settings a session's config change loosens, comparing the session's effective policy before and after it (its
 * override, else the gateway's): a faster pace, a bigger burst, less jitter, a shorter gap, a higher cap or ladder,
 * typing turned off, an exemption. Only the master key may make those; any manager may tighten.
 */
export function loosenedSettings(defaults: GovernorConfig, before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const was = policyOf(defaults, before);
  const now = policyOf(defaults, after);
  const looser: string[] = [];
  const exempt = (config: Record<string, unknown>) => (config.governor as SessionGovernorConfig | null | undefined)?.exempt === true;
  if (exempt(after) && !exempt(before)) looser.push('exempt');
  if (now.perMinute > was.perMinute) looser.push('perMinute');
  if (now.burst > was.burst) looser.push('burst');
  if (now.jitterPercent < was.jitterPercent) looser.push('jitterPercent');
  if (now.recipientGapSeconds < was.recipientGapSeconds) looser.push('recipientGapSeconds');
  if (now.firstContactsPerDay > was.firstContactsPerDay) looser.push('firstContactsPerDay');
  // no day of the ladder above the one before (a missing day is the mature cap, so a shorter ladder may loosen)
  const days = Math.max(now.warmup.length, was.warmup.length);
  for (let day = 0; day < days; day++) {
    if ((now.warmup[day] ?? now.firstContactsPerDay) > (was.warmup[day] ?? was.firstContactsPerDay)) {
      looser.push('warmup');
      break;
    }
  }
  if (was.typing && !now.typing) looser.push('typing');
  return looser;
}

/** Whether a caller's sends skip the governor: an API key the operator exempted. Never a client token, nor the master key. */
export function callerExempt(principal: Principal | undefined): boolean {
  return principal?.kind === 'key' && principal.governorExempt === true;
}

/** Only people are first contacts: a group, a channel or a status post is not a person who could have written. */
export function isPersonChat(chatId: string): boolean {
  return chatId.endsWith('@s.whatsapp.net') || chatId.endsWith('@lid');
}

/** The cap on first contacts that applies at `now`: the warm-up ladder's step for the day since pairing, else the mature cap. */
export function firstContactCap(policy: GovernorPolicy, pairedAt: number | null, now: number): { limit: number; name: string; setting: string } {
  const day = pairedAt === null ? 0 : Math.floor(now / DAY_MS) - Math.floor(pairedAt / DAY_MS);
  if (day >= 0 && day < policy.warmup.length) return { limit: policy.warmup[day]!, name: 'warmup', setting: `/governor/warmup/${day}` };
  return { limit: policy.firstContactsPerDay, name: 'firstContactsPerDay', setting: '/governor/firstContactsPerDay' };
}

interface Bucket {
  tokens: number;
  at: number;
  /** chat → when the session last sent to it */
  lastTo: Map<string, number>;
}

/** chats remembered per session for the recipient gap, before the ones past their gap are swept */
const RECIPIENTS_SWEEP_AT = 4096;

/** The pace of each session: how long a send to a chat must wait, and the taking of its turn. In memory. */
export class Pacer {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** ms until a send of `session` to `chatId` may go (0: now). */
  waitMs(session: string, chatId: string, policy: GovernorPolicy): number {
    const now = this.clock();
    const bucket = this.refilled(session, policy, now);
    const paceWait = bucket.tokens >= 1 ? 0 : ((1 - bucket.tokens) * 60_000) / policy.perMinute;
    const last = bucket.lastTo.get(chatId);
    const gapWait = last === undefined ? 0 : Math.max(0, last + policy.recipientGapSeconds * 1000 - now);
    return Math.ceil(Math.max(paceWait, gapWait));
  }

  /** The send goes now: it takes a turn of the bucket and stamps its chat. */
  take(session: string, chatId: string, policy: GovernorPolicy): void {
    const now = this.clock();
    const bucket = this.refilled(session, policy, now);
    bucket.tokens -= 1;
    bucket.lastTo.delete(chatId);
    bucket.lastTo.set(chatId, now);
    if (bucket.lastTo.size > RECIPIENTS_SWEEP_AT) {
      for (const [chat, at] of bucket.lastTo) {
        if (at + policy.recipientGapSeconds * 1000 > now) break;
        bucket.lastTo.delete(chat);
      }
    }
  }

  /** A random extra wait for a queued send: 0..jitterPercent % of one pace interval. */
  jitterMs(policy: GovernorPolicy): number {
    return Math.floor(this.random() * (policy.jitterPercent / 100) * (60_000 / policy.perMinute));
  }

  forget(session: string): void {
    this.buckets.delete(session);
  }

  private refilled(session: string, policy: GovernorPolicy, now: number): Bucket {
    let bucket = this.buckets.get(session);
    if (!bucket) {
      bucket = { tokens: policy.burst, at: now, lastTo: new Map() };
      this.buckets.set(session, bucket);
    }
    // a bucket may go below zero (a turn taken by a queued send that waited out its wait); it refills from there
    bucket.tokens = Math.min(policy.burst, bucket.tokens + ((now - bucket.at) * policy.perMinute) / 60_000);
    bucket.at = now;
    return bucket;
  }
}

/**
 * The people who never wrote that each session wrote to (or queued a send for) today, per UTC day: loaded once a day
 * from the store, then kept here as sends are admitted. A person counts once a day, whatever number of messages.
 */
export class FirstContacts {
  private readonly days = new Map<string, { day: number; chats: Set<string> }>();
  private readonly loading = new Map<string, Promise<Set<string>>>();

  constructor(
    private readonly load: (session: string, since: number) => Promise<string[]>,
    private readonly clock: () => number = Date.now,
  ) {}

  /** today's set of the session (loaded from the store on the first call of a day) */
  async today(session: string): Promise<Set<string>> {
    const day = utcDayStart(this.clock());
    const held = this.days.get(session);
    if (held?.day === day) return held.chats;
    const key = `${session}\u0000${day}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.load(session, day).then((chats) => {
        const set = new Set(chats);
        this.days.set(session, { day, chats: set });
        return set;
      });
      this.loading.set(key, pending);
      void pending.finally(() => this.loading.delete(key)).catch(() => undefined);
    }
    return pending;
  }

  forget(session: string): void {
    this.days.delete(session);
  }
}
