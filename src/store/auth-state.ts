// Repository of engine credentials per session: serialised values under string keys, sealed at rest, each batch written in one transaction.
import type { Db } from './db.js';
import type { AuthStateStore } from '../engine/types.js';
import type { SecretBox } from '../auth/secret-box.js';
import { contextOf } from './sealed-columns.js';

export type AuthStateRepo = ReturnType<typeof createAuthStateRepo>;

/**
 * Credentials are written apart from the tick's batched event writes (`beforeWrite` commits those first) and
 * with synchronous=FULL, so a key write is on disk before Baileys uses it on the wire: losing one loses the session.
 */
/**
 * @param fence in a cluster, throws unless this node still holds the session's lease (LeaseFence); it runs inside each
 * write's transaction, so a node that lost a session never writes over its new owner's credentials
 * @param joinTick joins the tick transaction (staged writes: Signal keys that commit with the message they decrypted)
 */
export function createAuthStateRepo(db: Db, box: SecretBox, beforeWrite: () => void = () => {}, fence: (session: string) => void = () => {}, joinTick: () => void = () => {}) {
  const context = contextOf('auth_state', 'value');
  const open = (raw: string | undefined) => (raw === undefined ? undefined : box.open(raw, context));
  const getOne = db.prepare('SELECT value FROM auth_state WHERE session = ? AND key = ?').pluck();
  const upsert = db.prepare(
    'INSERT INTO auth_state (session, key, value) VALUES (?, ?, ?) ON CONFLICT (session, key) DO UPDATE SET value = excluded.value',
  );
  const removeOne = db.prepare('DELETE FROM auth_state WHERE session = ? AND key = ?');
  const removeAll = db.prepare('DELETE FROM auth_state WHERE session = ?');
  const any = db.prepare('SELECT 1 FROM auth_state WHERE session = ? LIMIT 1').pluck();

  const writeBatch = db.transaction((session: string, entries: Record<string, string | null>) => {
    fence(session);
    for (const [key, value] of Object.entries(entries)) {
      if (value === null) removeOne.run(session, key);
      else upsert.run(session, key, value);
    }
  });

  const clearAll = db.transaction((session: string) => {
    fence(session);
    removeAll.run(session);
  });

  const durably = (write: () => void) => {
    db.pragma('synchronous = FULL');
    try {
      write();
    } finally {
      db.pragma('synchronous = NORMAL');
    }
  };

  return {
    forSession(session: string): AuthStateStore {
      const seal = (entries: Record<string, string | null>) => {
        // sealed before the transaction opens: the write lock is held for the writes only
        const sealed: Record<string, string | null> = {};
        for (const [key, value] of Object.entries(entries)) sealed[key] = value === null ? null : box.seal(value, context);
        return sealed;
      };
      return {
        get: (key) => open(getOne.get(session, key) as string | undefined),
        getMany(keys) {
          const found = new Map<string, string>();
          for (const key of keys) {
            const value = open(getOne.get(session, key) as string | undefined);
            if (value !== undefined) found.set(key, value);
          }
          return found;
        },
        set(entries) {
          const sealed = seal(entries);
          beforeWrite();
          durably(() => writeBatch(session, sealed));
        },
        stage(entries) {
          const sealed = seal(entries);
          joinTick();
          writeBatch(session, sealed);
        },
        clear() {
          beforeWrite();
          durably(() => clearAll(session));
        },
        isEmpty() {
          return any.get(session) === undefined;
        },
      };
    },
  };
}
