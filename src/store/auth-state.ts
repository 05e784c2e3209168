// Repository of engine credentials per session: serialised values under string keys, sealed at rest, each batch written in one transaction.
import type { Db } from './db.js';
import type { AuthStateStore } from '../engine/types.js';
import type { SecretBox } from '../auth/secret-box.js';
import { contextOf } from './sealed-columns.js';

export type AuthStateRepo = ReturnType<typeof createAuthStateRepo>;

/** A write whose transaction answers its fence's refusal instead of throwing it: thrown once the transaction has ended. */
function fenced<A extends unknown[]>(write: (...args: A) => Promise<Error | undefined | void>): (...args: A) => Promise<void> {
  return async (...args) => {
    const refused = await write(...args);
    if (refused) throw refused;
  };
}

/**
 * Credentials are written apart from the tick's batched event writes (`beforeWrite` commits those first) and
 * durably (SQLite: synchronous=FULL), so a key write is on disk before Baileys uses it on the wire: losing one loses
 * the session.
 */
/**
 * @param fence in a cluster, resolves with the refusal to write when this node no longer holds the session's lease
 * (createLeaseFence); it is awaited inside each write's transaction, so a node that lost a session never writes over its
 * new owner's credentials (absent on one daemon). A refusal ends the transaction with nothing written and is thrown
 * after it: a throw inside would roll back the tick it is part of, other sessions' writes with it (sql.ts)
 * @param joinTick joins the tick transaction (staged writes: Signal keys that commit with the message they decrypted)
 */
export function createAuthStateRepo(
  db: Db,
  box: SecretBox,
  beforeWrite: () => void = () => {},
  fence?: (session: string) => Promise<Error | undefined>,
  joinTick: () => void = () => {},
) {
  const context = contextOf('auth_state', 'value');
  const open = (raw: string | undefined) => (raw === undefined ? undefined : box.open(raw, context));
  const getOne = db.prepare<string>('SELECT value FROM auth_state WHERE session = ? AND key = ?').pluck();
  // the keys as one JSON array parameter: one statement (and one round trip) for any number of keys
  // the list is bound as text: a parameter PostgreSQL takes for jsonb, postgres.js would encode again as a JSON string
  const keyList = db.dialect === 'postgres' ? 'SELECT jsonb_array_elements_text(CAST(CAST(? AS text) AS jsonb))' : 'SELECT value FROM json_each(?)';
  const getSome = db.prepare<{ key: string; value: string }>(`SELECT key, value FROM auth_state WHERE session = ? AND key IN (${keyList})`);
  const upsert = db.prepare(
    'INSERT INTO auth_state (session, key, value) VALUES (?, ?, ?) ON CONFLICT (session, key) DO UPDATE SET value = excluded.value',
  );
  const removeOne = db.prepare('DELETE FROM auth_state WHERE session = ? AND key = ?');
  const removeAll = db.prepare('DELETE FROM auth_state WHERE session = ?');
  const any = db.prepare('SELECT 1 FROM auth_state WHERE session = ? LIMIT 1').pluck();

  // the statements of a batch are sent together (PostgreSQL pipelines them on its connection); any failure undoes the batch
  const writeBatch = fenced(
    db.transaction(async (session: string, entries: Record<string, string | null>) => {
      const refused = await fence?.(session);
      if (refused) return refused;
      await Promise.all(Object.entries(entries).map(([key, value]) => (value === null ? removeOne.run(session, key) : upsert.run(session, key, value))));
    }),
  );

  const clearAll = fenced(
    db.transaction(async (session: string) => {
      const refused = await fence?.(session);
      if (refused) return refused;
      await removeAll.run(session);
    }),
  );

  /**
   * A durable write, settled once committed. On SQLite they go one after the other: synchronous=FULL is a setting of the
   * connection, which the first of two overlapping writes would set back to NORMAL under the second (PostgreSQL's commits
   * are durable anyway, and its transactions take turns on the writer connection).
   */
  let durableWrites: Promise<unknown> = Promise.resolve();
  const durably = (write: () => Promise<void>): Promise<void> => {
    const run = async () => {
      beforeWrite();
      // SQLite changes its safety level only between transactions: a tick still open (its commit waits for an explicit
      // transaction, or writes of this turn opened another) commits first; no wait between this check and durably's pragma
      while (db.dialect === 'sqlite' && db.inTransaction) {
        const open = db.tick?.committed();
        if (!open) break;
        db.tick!.flush();
        await open.catch(() => undefined);
      }
      return db.durably(async () => {
        await write();
        // inside a tick opened meanwhile the write was a savepoint of it: that tick commits now, durably, with it
        const commit = db.tick?.committed();
        if (commit) {
          db.tick!.flush();
          await commit;
        }
      });
    };
    if (db.dialect !== 'sqlite') return run();
    const done = durableWrites.then(run);
    durableWrites = done.catch(() => undefined);
    return done;
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
        get: async (key) => open(await getOne.get(session, key)),
        async getMany(keys) {
          const found = new Map<string, string>();
          if (!keys.length) return found;
          for (const row of await getSome.all(session, JSON.stringify(keys))) found.set(row.key, open(row.value)!);
          return found;
        },
        set(entries) {
          const sealed = seal(entries);
          return durably(() => writeBatch(session, sealed));
        },
        stage(entries) {
          const sealed = seal(entries);
          joinTick();
          // a cluster: a savepoint of the tick, the lease checked (and share-locked until the tick commits) before the
          // writes; the tick commits after it, and its rejection tells the caller nothing of it was written
          if (fence) return writeBatch(session, sealed);
          for (const [key, value] of Object.entries(sealed)) {
            if (value === null) removeOne.stage(session, key);
            else upsert.stage(session, key, value);
          }
          return undefined;
        },
        clear() {
          return durably(() => clearAll(session));
        },
        isEmpty: async () => (await any.get(session)) === undefined,
      };
    },
  };
}
