// Repository of API keys: only the SHA-256 hash of a key is stored; the key itself is shown once at creation.
import type { Db } from './db.js';

export interface ApiKeyRow {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string[];
  sessions: string[] | null;
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
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export type KeysRepo = ReturnType<typeof createKeysRepo>;

export function createKeysRepo(db: Db) {
  const insert = db.prepare(
    'INSERT INTO api_keys (id, name, hash, prefix, scopes, sessions, created_at) VALUES (@id, @name, @hash, @prefix, @scopes, @sessions, @createdAt)',
  );
  const byHash = db.prepare('SELECT * FROM api_keys WHERE hash = ?');
  const byId = db.prepare('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare('SELECT * FROM api_keys ORDER BY created_at, id');
  const remove = db.prepare('DELETE FROM api_keys WHERE id = ?');
  const touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');

  return {
    insert(key: Omit<ApiKeyRow, 'lastUsedAt'>): void {
      insert.run({ ...key, scopes: JSON.stringify(key.scopes), sessions: key.sessions ? JSON.stringify(key.sessions) : null });
    },
    findByHash(hash: string): ApiKeyRow | undefined {
      const raw = byHash.get(hash) as RawKey | undefined;
      return raw && toRow(raw);
    },
    get(id: string): ApiKeyRow | undefined {
      const raw = byId.get(id) as RawKey | undefined;
      return raw && toRow(raw);
    },
    list: (): ApiKeyRow[] => (all.all() as RawKey[]).map(toRow),
    delete: (id: string): boolean => remove.run(id).changes > 0,
    touch: (id: string, at: string): void => void touch.run(at, id),
  };
}
