// Repository of daemon settings changed at run time (S3, auto-persist, …): JSON values under string keys.
import type { Db } from './db.js';

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;

export function createSettingsRepo(db: Db) {
  const getOne = db.prepare('SELECT value FROM settings WHERE key = ?').pluck();
  const upsert = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const remove = db.prepare('DELETE FROM settings WHERE key = ?');
  return {
    get<T>(key: string): T | undefined {
      const raw = getOne.get(key) as string | undefined;
      return raw === undefined ? undefined : (JSON.parse(raw) as T);
    },
    set(key: string, value: unknown): void {
      upsert.run(key, JSON.stringify(value));
    },
    delete(key: string): void {
      remove.run(key);
    },
  };
}
