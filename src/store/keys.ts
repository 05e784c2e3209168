// Repository of API keys: only the SHA-256 hash of a key is stored; the key itself is shown once at creation.
import type { Db } from './db.js';

export interface ApiKeyRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string[];
  sessions: string[] | null;
  /** id of the API key that created this one; null = the operator (master key) */
  createdBy: string | null;
  /** requests a minute this key may make; null = unlimited */
  rateLimitPerMinute: number | null;
  /** the operator exempted the key's sends from the send governor */
  governorExempt: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

interface RawKey {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string;
  sessions: string | null;
  created_by: string | null;
  rate_limit_per_minute: number | null;
  governor_exempt: number;
  created_at: string;
  last_used_at: string | null;
}

const toRow = (r: RawKey): ApiKeyRow => ({
  id: r.id,
  name: r.name,
  hash: r.hash,
  prefix: r.prefix,
  scopes: JSON.parse(r.scopes) as string[],
  sessions: r.sessions === null ? null : (JSON.parse(r.sessions) as string[]),
  createdBy: r.created_by,
  rateLimitPerMinute: r.rate_limit_per_minute,
  governorExempt: r.governor_exempt === 1,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export type KeysRepo = ReturnType<typeof createKeysRepo>;

export function createKeysRepo(db: Db) {
  const insert = db.prepare(
    `INSERT INTO api_keys (id, name, hash, prefix, scopes, sessions, created_by, rate_limit_per_minute, created_at)
     VALUES (@id, @name, @hash, @prefix, @scopes, @sessions, @createdBy, @rateLimitPerMinute, @createdAt)`,
  );
  const byHash = db.prepare('SELECT * FROM api_keys WHERE hash = ?');
  const byId = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare('SELECT * FROM api_keys ORDER BY created_at, id');
  const byOwner = db.prepare('SELECT * FROM api_keys WHERE created_by = ? ORDER BY created_at, id');
  const countByOwner = db.prepare('SELECT COUNT(*) FROM api_keys WHERE created_by = ?').pluck();
  const remove = db.prepare('DELETE FROM api_keys WHERE id = ?');
  const removeOwned = db.prepare('DELETE FROM api_keys WHERE id = ? AND created_by = ?');
  const touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  const setExempt = db.prepare('UPDATE api_keys SET governor_exempt = ? WHERE id = ?');
  // a key's sessions are a JSON array in a text column
  const [elements, gathered] = db.dialect === 'postgres'
    ? ['jsonb_array_elements_text(api_keys.sessions::jsonb) AS e(value)', "COALESCE(jsonb_agg(value), '[]'::jsonb)::text"]
    : ['json_each(api_keys.sessions)', 'json_group_array(value)'];
  const keysOfSession = db
    .prepare(`SELECT id FROM api_keys WHERE sessions IS NOT NULL AND EXISTS (SELECT 1 FROM ${elements} WHERE value = @name)`)
    .pluck();
  const dropSession = db.prepare(
    `UPDATE api_keys SET sessions = (SELECT ${gathered} FROM ${elements} WHERE value <> @name)
     WHERE sessions IS NOT NULL AND EXISTS (SELECT 1 FROM ${elements} WHERE value = @name)`,
  );

  return {
    /** false: no such key */
    setGovernorExempt: async (id: string, exempt: boolean): Promise<boolean> => (await setExempt.run(exempt ? 1 : 0, id)).changes > 0,
    async insert(key: Omit<ApiKeyRow, 'lastUsedAt' | 'governorExempt'>): Promise<void> {
      await insert.run({ ...key, scopes: JSON.stringify(key.scopes), sessions: key.sessions ? JSON.stringify(key.sessions) : null });
    },
    async findByHash(hash: string): Promise<ApiKeyRow | undefined> {
      const raw = (await byHash.get(hash)) as RawKey | undefined;
      return raw && toRow(raw);
    },
    async get(id: string): Promise<ApiKeyRow | undefined> {
      const raw = (await byId.get(id)) as RawKey | undefined;
      return raw && toRow(raw);
    },
    list: async (): Promise<ApiKeyRow[]> => ((await all.all()) as RawKey[]).map(toRow),
    /** The keys one API key created. */
    listOwnedBy: async (ownerId: string): Promise<ApiKeyRow[]> => ((await byOwner.all(ownerId)) as RawKey[]).map(toRow),
    countOwnedBy: async (ownerId: string): Promise<number> => (await countByOwner.get(ownerId)) as number,
    delete: async (id: string): Promise<boolean> => (await remove.run(id)).changes > 0,
    /** Removes a session from every key limited to it (a key left with an empty list reaches no session). */
    forgetSession: db.transaction(async (name: string): Promise<string[]> => {
      const ids = (await keysOfSession.all({ name })) as string[];
      if (ids.length) await dropSession.run({ name });
      return ids;
    }),
    /** Deletes a key only when `ownerId` created it. */
    deleteOwned: async (id: string, ownerId: string): Promise<boolean> => (await removeOwned.run(id, ownerId)).changes > 0,
    /** Stamps the key's last use, staged into the tick: nothing waits for it. */
    touch(id: string, at: string): void {
      db.tick?.join();
      touch.stage(at, id);
    },
  };
}
