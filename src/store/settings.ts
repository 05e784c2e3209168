// Repository of daemon settings changed at run time (S3, auto-persist, signing secrets, …): JSON values under string keys, sealed at rest.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { contextOf } from './sealed-columns.js';

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;

export function createSettingsRepo(db: Db, box: SecretBox) {
  const context = contextOf('settings', 'value');
  const getOne = db.prepare<string>('SELECT value FROM settings WHERE key = ?').pluck();
  const upsert = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const insertNew = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING');
  const remove = db.prepare('DELETE FROM settings WHERE key = ?');
  const read = async <T>(raw: Promise<string | undefined>): Promise<T | undefined> => {
    const value = await raw;
    return value === undefined ? undefined : (JSON.parse(box.open(value, context)) as T);
  };
  return {
    get: <T>(key: string): Promise<T | undefined> => read<T>(getOne.get(key)),
    async set(key: string, value: unknown): Promise<void> {
      await upsert.run(key, box.seal(JSON.stringify(value), context));
    },
    /** Stores `value` unless the key has one already (another daemon sharing the store may have set it first); the value kept. */
    async setIfAbsent<T>(key: string, value: T): Promise<T> {
      await insertNew.run(key, box.seal(JSON.stringify(value), context));
      return (await read<T>(getOne.get(key)))!;
    },
    async delete(key: string): Promise<void> {
      await remove.run(key);
    },
  };
}
