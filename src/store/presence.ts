// Repository of presence per session: the contacts it subscribed to and the last presence each one showed.
import type { Db } from './db.js';

export type StoredPresence = 'available' | 'unavailable' | 'composing' | 'recording';

export interface PresenceRow {
  session: string;
  jid: string;
  subscribed: boolean;
  presence: StoredPresence | null;
  /** Unix seconds */
  lastSeen: number | null;
  updatedAt: number;
}

interface RawPresence {
  session: string;
  jid: string;
  subscribed: number;
  presence: StoredPresence | null;
  last_seen: number | null;
  updated_at: number;
}

const toRow = (r: RawPresence): PresenceRow => ({
  session: r.session,
  jid: r.jid,
  subscribed: r.subscribed === 1,
  presence: r.presence,
  lastSeen: r.last_seen,
  updatedAt: r.updated_at,
});

export type PresenceRepo = ReturnType<typeof createPresenceRepo>;

export function createPresenceRepo(db: Db) {
  const byJid = db.prepare('SELECT * FROM presences WHERE session = ? AND jid = ?');
  const subscribe = db.prepare(
    `INSERT INTO presences (session, jid, subscribed, updated_at) VALUES (?, ?, 1, ?)
     ON CONFLICT (session, jid) DO UPDATE SET subscribed = 1`,
  );
  const record = db.prepare(
    `INSERT INTO presences (session, jid, presence, last_seen, updated_at) VALUES (@session, @jid, @presence, @lastSeen, @now)
     ON CONFLICT (session, jid) DO UPDATE SET presence = excluded.presence,
       last_seen = COALESCE(excluded.last_seen, presences.last_seen), updated_at = excluded.updated_at`,
  );
  const page = db.prepare('SELECT * FROM presences WHERE session = ? AND subscribed = 1 ORDER BY jid LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT COUNT(*) FROM presences WHERE session = ? AND subscribed = 1').pluck();
  const subscribedJids = db.prepare('SELECT jid FROM presences WHERE session = ? AND subscribed = 1').pluck();
  const clear = db.prepare('DELETE FROM presences WHERE session = ?');

  return {
    async get(session: string, jid: string): Promise<PresenceRow | undefined> {
      const raw = (await byJid.get(session, jid)) as RawPresence | undefined;
      return raw && toRow(raw);
    },
    async subscribe(session: string, jid: string): Promise<void> {
      await subscribe.run(session, jid, Date.now());
    },
    /** a presence seen on the network (staged into the tick, joined here); a null lastSeen keeps the one known before */
    record(session: string, jid: string, presence: StoredPresence, lastSeen: number | null): void {
      db.tick?.join();
      record.stage({ session, jid, presence, lastSeen, now: Date.now() });
    },
    async listSubscribed(session: string, limit: number, offset: number): Promise<PresenceRow[]> {
      return ((await page.all(session, limit, offset)) as RawPresence[]).map(toRow);
    },
    countSubscribed: async (session: string): Promise<number> => (await count.get(session)) as number,
    subscribedJids: async (session: string): Promise<string[]> => (await subscribedJids.all(session)) as string[],
    async clear(session: string): Promise<void> {
      await clear.run(session);
    },
  };
}
