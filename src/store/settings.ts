// Repository of daemon settings changed at run time (S3, auto-persist, signing secrets, …): JSON values under string keys, sealed at rest.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { contextOf } from './sealed-columns.js';

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;

export function createSettingsRepo(db: Db, box: SecretBox) {
  const context = contextOf('settings', 'value');
  const getOne = db.prepare('SELECT value FROM settings WHERE key = ?').pluck();
  const upsert = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const insertNew = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING');
  const remove = db.prepare('DELETE FROM settings WHERE key = ?');
  return {
    get<T>(key: string): T | undefined {
      const raw = getOne.get(key) as string | undefined;
      return raw === undefined ? undefined : (JSON.parse(box.open(raw, context)) as T);
    },
    set(key: string, value: unknown): void {
      upsert.run(key, box.seal(JSON.stringify(value), context));
    },
    /** Stores `value` unless the key has one already (another daemon sharing the store may have set it first); the value kept. */
    setIfAbsent<T>(key: string, value: T): T {
      insertNew.run(key, box.seal(JSON.stringify(value), context));
      return this.get<T>(key)!;
    },
    delete(key: string): void {
      remove.run(key);
    },
  };
}
