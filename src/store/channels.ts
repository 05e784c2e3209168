// Repository of the channels each session owns or follows (the network has no list call, so the gateway keeps it).
import type { Db } from './db.js';

export type ChannelRole = 'owner' | 'follower';

export interface ChannelRow {
  session: string;
  jid: string;
  role: ChannelRole;
  name: string | null;
  muted: boolean;
  updatedAt: number;
}

interface RawChannel {
  session: string;
  jid: string;
  role: ChannelRole;
  name: string | null;
  muted: number;
  updated_at: number;
}

const toRow = (r: RawChannel): ChannelRow => ({ session: r.session, jid: r.jid, role: r.role, name: r.name, muted: r.muted === 1, updatedAt: r.updated_at });

export type ChannelsRepo = ReturnType<typeof createChannelsRepo>;

export function createChannelsRepo(db: Db) {
  const byJid = db.prepare('SELECT * FROM channels WHERE session = ? AND jid = ?');
  const put = db.prepare(
    `INSERT INTO channels (session, jid, role, name, muted, updated_at) VALUES (@session, @jid, @role, @name, 0, @now)
     ON CONFLICT (session, jid) DO UPDATE SET role = CASE WHEN channels.role = 'owner' THEN 'owner' ELSE excluded.role END,
       name = COALESCE(excluded.name, channels.name), updated_at = excluded.updated_at`,
  );
  const setMuted = db.prepare('UPDATE channels SET muted = ?, updated_at = ? WHERE session = ? AND jid = ?');
  const remove = db.prepare('DELETE FROM channels WHERE session = ? AND jid = ?');
  const page = db.prepare('SELECT * FROM channels WHERE session = ? ORDER BY jid LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT COUNT(*) FROM channels WHERE session = ?').pluck();
  const clear = db.prepare('DELETE FROM channels WHERE session = ?');

  return {
    async get(session: string, jid: string): Promise<ChannelRow | undefined> {
      const raw = (await byJid.get(session, jid)) as RawChannel | undefined;
      return raw && toRow(raw);
    },
    /** records a channel the session owns or follows (an owner stays owner); staged into the tick (joined here) */
    put(session: string, jid: string, role: ChannelRole, name?: string): void {
      db.tick?.join();
      put.stage({ session, jid, role, name: name ?? null, now: Date.now() });
    },
    /** staged into the tick (joined here) */
    setMuted(session: string, jid: string, muted: boolean): void {
      db.tick?.join();
      setMuted.stage(muted ? 1 : 0, Date.now(), session, jid);
    },
    async remove(session: string, jid: string): Promise<boolean> {
      return (await remove.run(session, jid)).changes > 0;
    },
    async list(session: string, limit: number, offset: number): Promise<ChannelRow[]> {
      return ((await page.all(session, limit, offset)) as RawChannel[]).map(toRow);
    },
    count: async (session: string): Promise<number> => (await count.get(session)) as number,
    async clear(session: string): Promise<void> {
      await clear.run(session);
    },
  };
}
