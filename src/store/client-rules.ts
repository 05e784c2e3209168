// Repository of client rules, daily client send counts, and per-session client-token epochs.
import type { Db } from './db.js';

export type RecipientMode = 'none' | 'conversation' | 'any' | 'verified';

export interface TokenEpoch {
  epoch: number;
  /** the session's creation time (ms): differs between a session and one re-created under its name */
  incarnation: number;
}

export interface ClientRulesRow {
  session: string;
  recipientMode: RecipientMode;
  enabled: boolean;
  allowedActions: string[];
  rateLimitPerMinute: number;
  dailySendCap: number;
  allowedOrigins: string[];
  updatedAt: string;
}

interface RawRules {
  session: string;
  recipient_mode: RecipientMode;
  enabled: number;
  allowed_actions: string;
  rate_limit_per_minute: number;
  daily_send_cap: number;
  allowed_origins: string;
  updated_at: string;
}

const list = (csv: string): string[] => (csv === '' ? [] : csv.split(','));

const toRow = (r: RawRules): ClientRulesRow => ({
  session: r.session,
  recipientMode: r.recipient_mode,
  enabled: r.enabled === 1,
  allowedActions: list(r.allowed_actions),
  rateLimitPerMinute: r.rate_limit_per_minute,
  dailySendCap: r.daily_send_cap,
  allowedOrigins: list(r.allowed_origins),
  updatedAt: r.updated_at,
});

export type ClientRulesRepo = ReturnType<typeof createClientRulesRepo>;

export function createClientRulesRepo(db: Db) {
  const upsert = db.prepare(
    `INSERT INTO client_rules (session, recipient_mode, enabled, allowed_actions, rate_limit_per_minute, daily_send_cap, allowed_origins, updated_at)
     VALUES (@session, @recipientMode, @enabled, @allowedActions, @rateLimitPerMinute, @dailySendCap, @allowedOrigins, @updatedAt)
     ON CONFLICT (session) DO UPDATE SET recipient_mode = excluded.recipient_mode, enabled = excluded.enabled,
       allowed_actions = excluded.allowed_actions, rate_limit_per_minute = excluded.rate_limit_per_minute,
       daily_send_cap = excluded.daily_send_cap, allowed_origins = excluded.allowed_origins, updated_at = excluded.updated_at`,
  );
  const get = db.prepare('SELECT * FROM client_rules WHERE session = ?');
  const all = db.prepare('SELECT * FROM client_rules');
  const remove = db.prepare('DELETE FROM client_rules WHERE session = ?');
  const epoch = db.prepare('SELECT client_token_epoch AS epoch, created_at AS "createdAt" FROM sessions WHERE name = ?');
  const bumpEpoch = db.prepare('UPDATE sessions SET client_token_epoch = client_token_epoch + 1 WHERE name = ?');
  const dailyCount = db.prepare('SELECT count FROM client_daily_sends WHERE session = ? AND ephemeral_id = ? AND day = ?').pluck();
  /** one statement, so the check against the cap and the increment cannot be split by another request */
  const reserveDaily = db.prepare(
    `INSERT INTO client_daily_sends (session, ephemeral_id, day, count) VALUES (@session, @ephemeralId, @day, 1)
     ON CONFLICT (session, ephemeral_id, day) DO UPDATE SET count = client_daily_sends.count + 1 WHERE client_daily_sends.count < @cap`,
  );
  const releaseDaily = db.prepare('UPDATE client_daily_sends SET count = count - 1 WHERE session = ? AND ephemeral_id = ? AND day = ? AND count > 0');
  const pruneDaily = db.prepare('DELETE FROM client_daily_sends WHERE day < ?');

  /** rules are read on every client-token request: cached, dropped on each write */
  const cache = new Map<string, ClientRulesRow | null>();
  /** a write made while a read was on its way moves this on: that read's answer is not cached (it may be the old rules) */
  let writes = 0;
  const invalidate = (session: string) => {
    writes += 1;
    cache.delete(session);
  };
  const load = async (session: string): Promise<ClientRulesRow | undefined> => {
    const before = writes;
    const raw = (await get.get(session)) as RawRules | undefined;
    const row = raw ? toRow(raw) : null;
    if (before === writes) {
      if (cache.size >= 10_000) cache.clear();
      cache.set(session, row);
    }
    return row ?? undefined;
  };

  return {
    async put(rules: ClientRulesRow): Promise<void> {
      invalidate(rules.session);
      await upsert.run({
        ...rules,
        enabled: rules.enabled ? 1 : 0,
        allowedActions: rules.allowedActions.join(','),
        allowedOrigins: rules.allowedOrigins.join(','),
      });
      // a read that started before the write committed may have cached the old rules meanwhile
      invalidate(rules.session);
    },
    /** The session's rules; a cached answer costs no query (and is already settled). */
    get(session: string): Promise<ClientRulesRow | undefined> {
      const cached = cache.get(session);
      if (cached !== undefined) return Promise.resolve(cached ?? undefined);
      return load(session);
    },
    /** drops what is cached of a session (it was deleted, and its rules with it) */
    forget: (session: string): void => invalidate(session),
    all: async (): Promise<ClientRulesRow[]> => ((await all.all()) as RawRules[]).map(toRow),
    /** removes the rules and moves the session's token epoch on, so every token minted before is refused */
    delete: db.transaction(async (session: string): Promise<boolean> => {
      invalidate(session);
      await bumpEpoch.run(session);
      const removed = (await remove.run(session)).changes > 0;
      invalidate(session);
      return removed;
    }),
    /**
     * What ties a token to the session as it is now: the epoch (moved on when the rules are deleted) and the session's
     * creation time (a session deleted and created again under the same name starts over at epoch 0, but not at the same time).
     */
    tokenEpoch: async (session: string): Promise<TokenEpoch | undefined> => {
      const row = (await epoch.get(session)) as { epoch: number; createdAt: string } | undefined;
      return row ? { epoch: row.epoch, incarnation: Date.parse(row.createdAt) } : undefined;
    },
    dailySends: async (session: string, ephemeralId: string, day: string): Promise<number> =>
      ((await dailyCount.get(session, ephemeralId, day)) as number | undefined) ?? 0,
    /** takes one send of the day's cap; false (nothing counted) when the cap is already reached (one statement: atomic) */
    reserveDailySend: async (session: string, ephemeralId: string, day: string, cap: number): Promise<boolean> =>
      cap >= 1 && (await reserveDaily.run({ session, ephemeralId, day, cap })).changes > 0,
    /** gives back a send reserved with reserveDailySend (the send failed) */
    releaseDailySend: async (session: string, ephemeralId: string, day: string): Promise<void> => {
      await releaseDaily.run(session, ephemeralId, day);
    },
    pruneDailyBefore: async (day: string): Promise<number> => (await pruneDaily.run(day)).changes,
  };
}
