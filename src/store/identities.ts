// Repository of the phone-number ↔ LID pairs each session learnt (migration 007): loaded when a session starts, written
// as they are learnt, pruned with the in-memory view's evictions, deleted with the session (foreign key).
import type { Db } from './db.js';
import type { IdentityPair, IdentitySource, IdentityStore } from '../engine/types.js';

export type IdentitiesRepo = ReturnType<typeof createIdentitiesRepo>;

/** A stored pair and when it was last written (learnt, or seen again: refreshed at most hourly), ms. */
export interface StoredIdentity extends IdentityPair {
  usedAt: number;
  /** when and from what the session learnt the pair; null for pairs stored before the gateway recorded it */
  learntAt: number | null;
  source: IdentitySource | null;
}

interface RawIdentity {
  pn: string;
  lid: string;
  used_at: number | string;
  learnt_at: number | string | null;
  source: IdentitySource | null;
}

export function createIdentitiesRepo(db: Db) {
  const all = db.prepare<IdentityPair>('SELECT pn, lid FROM identities WHERE session = ? ORDER BY used_at, pn');
  const dropLid = db.prepare('DELETE FROM identities WHERE session = ? AND lid = ? AND pn <> ?');
  // a pair seen again (no source) keeps when and from what it was learnt; a learnt or changed one records them
  const upsert = db.prepare(
    `INSERT INTO identities (session, pn, lid, used_at, learnt_at, source) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (session, pn) DO UPDATE SET
       learnt_at = CASE WHEN excluded.source IS NULL AND identities.lid = excluded.lid THEN identities.learnt_at ELSE excluded.learnt_at END,
       source = CASE WHEN excluded.source IS NULL AND identities.lid = excluded.lid THEN identities.source ELSE excluded.source END,
       lid = excluded.lid, used_at = excluded.used_at`,
  );
  const dropPn = db.prepare('DELETE FROM identities WHERE session = ? AND pn = ?');
  const count = db.prepare('SELECT COUNT(*) FROM identities WHERE session = ?').pluck();
  const byPn = db.prepare<RawIdentity>('SELECT pn, lid, used_at, learnt_at, source FROM identities WHERE session = ? AND pn = ?');
  const byLid = db.prepare<RawIdentity>('SELECT pn, lid, used_at, learnt_at, source FROM identities WHERE session = ? AND lid = ?');

  return {
    forSession(session: string): IdentityStore {
      return {
        load: () => all.all(session),
        /** staged into the tick (joined here): written with the events that taught the pairs, never awaited */
        save(pairs, evicted = []) {
          db.tick?.join();
          const now = Date.now();
          for (const { pn, lid, source } of pairs) {
            // a LID names one number: a pair that moved to another number replaces the old one
            dropLid.stage(session, lid, pn);
            upsert.stage(session, pn, lid, now, source ? now : null, source ?? null);
          }
          for (const pn of evicted) dropPn.stage(session, pn);
        },
      };
    },
    count: async (session: string): Promise<number> => (await count.get(session)) as number,
    /** the stored pair of a phone JID or a LID (bare), with when it was last stored */
    async find(session: string, jid: string): Promise<StoredIdentity | undefined> {
      const raw = (await (jid.endsWith('@lid') ? byLid : byPn).get(session, jid)) as RawIdentity | undefined;
      return raw && { pn: raw.pn, lid: raw.lid, usedAt: Number(raw.used_at), learntAt: raw.learnt_at === null ? null : Number(raw.learnt_at), source: raw.source };
    },
  };
}
