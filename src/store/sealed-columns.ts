// The columns holding secrets sealed at rest, and the whole-table passes over them: seal plaintext rows left by an
// older version, check the key against what is stored, re-seal under a new key, and compact the file afterwards.
import { isSealed, sealedKeyId, type SecretBox } from '../auth/secret-box.js';
import Database from 'better-sqlite3';
import type { Db } from './sql.js';
import { SqliteDb } from './sqlite-db.js';

export interface SealedColumn {
  table: string;
  column: string;
  /** the columns naming one row */
  key: string[];
  /** bound to every value of the column as AES-GCM additional data */
  context: string;
  /** its values are bound to their row as well (the key columns' values): one copied into another row does not open */
  boundToRow?: true;
}

/** Every column whose values are sealed. Its repository seals on write and opens on read with the same context. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'auth_state', column: 'value', key: ['session', 'key'], context: 'auth_state.value' },
  { table: 'webhooks', column: 'hmac_key', key: ['id'], context: 'webhooks.hmac_key' },
  { table: 'webhooks', column: 'headers', key: ['id'], context: 'webhooks.headers' },
  { table: 'settings', column: 'value', key: ['key'], context: 'settings.value' },
  { table: 'sessions', column: 'proxy', key: ['name'], context: 'sessions.proxy' },
  // the media key of each file (what decrypts it on the network), and each message's protocol copy and poll secret
  { table: 'media', column: 'ref', key: ['id'], context: 'media.ref', boundToRow: true },
  { table: 'messages', column: 'secret', key: ['session', 'chat_id', 'id'], context: 'messages.secret', boundToRow: true },
  { table: 'messages', column: 'raw', key: ['session', 'chat_id', 'id'], context: 'messages.raw', boundToRow: true },
];

/** A row's key as the text bound to its sealed values: the key columns' values in SealedColumn.key order. */
export const rowOf = (keys: readonly unknown[]): string => JSON.stringify(keys.map(String));

/** What a repository of a row-bound column seals and opens with: the row's key values, in SealedColumn.key order. */
export interface RowSealer {
  seal(plaintext: string, keys: readonly unknown[]): string;
  open(sealed: string, keys: readonly unknown[]): string;
}

export function rowSealer(box: SecretBox, table: string, column: string): RowSealer {
  const found = SEALED_COLUMNS.find((c) => c.table === table && c.column === column);
  if (!found?.boundToRow) throw new Error(`${table}.${column} is not a row-bound sealed column`);
  return {
    seal: (plaintext, keys) => box.seal(plaintext, found.context, rowOf(keys)),
    open: (sealed, keys) => box.open(sealed, found.context, rowOf(keys)),
  };
}

/** The row a value is bound to, when its column binds values to rows. */
const rowFor = (c: SealedColumn, keys: readonly unknown[]): string | undefined => (c.boundToRow ? rowOf(keys) : undefined);

export const contextOf = (table: string, column: string): string => {
  const found = SEALED_COLUMNS.find((c) => c.table === table && c.column === column);
  if (!found) throw new Error(`${table}.${column} is not a sealed column`);
  return found.context;
};

export type SealCounts = Record<string, number>;

/** SQL true for values of `column` in the sealed format, or (`not`) for the others (isSealed() is exact; this only narrows what is read) */
const sealedFormat = (db: Db, column: string, not = false) =>
  db.dialect === 'postgres'
    ? `${column} ${not ? '!~' : '~'} '^v[12]:[0-9a-f]{8}:'`
    : `${column} ${not ? 'NOT GLOB' : 'GLOB'} 'v[12]:${'[0-9a-f]'.repeat(8)}:*'`;

interface Pass {
  /** the keys of the rows holding a value (`where` narrows them further) */
  keys(where?: string): Promise<unknown[][]>;
  read(keys: unknown[]): Promise<string>;
  write(keys: unknown[], value: string): Promise<unknown>;
  /** the key of one row whose value matches `where`, if any */
  any(where: string): Promise<unknown[] | undefined>;
}

// Rows are listed by key and read one by one: a large Baileys install holds tens of thousands of Signal keys, which
// must not all sit in memory at once (and better-sqlite3 refuses writes while an iterator is open on the connection).
function passOver(db: Db, c: SealedColumn): Pass {
  const matches = c.key.map((k) => `${k} = ?`).join(' AND ');
  const read = db.prepare<string>(`SELECT ${c.column} FROM ${c.table} WHERE ${matches}`).pluck();
  const update = db.prepare(`UPDATE ${c.table} SET ${c.column} = ? WHERE ${matches}`);
  return {
    keys: (where = 'TRUE') => db.prepare(`SELECT ${c.key.join(', ')} FROM ${c.table} WHERE ${c.column} IS NOT NULL AND (${where})`).raw().all(),
    read: async (keys) => (await read.get(...keys)) as string,
    write: (keys, value) => update.run(value, ...keys),
    any: (where) => db.prepare(`SELECT ${c.key.join(', ')} FROM ${c.table} WHERE ${c.column} IS NOT NULL AND (${where}) LIMIT 1`).raw().get(),
  };
}

/**
 * Seals every value still stored in plaintext (written before secrets were encrypted), in one transaction; run on
 * every start, it finds nothing once done. Returns the count per column (empty when nothing was plaintext).
 */
export async function sealPlaintextRows(db: Db, box: SecretBox): Promise<SealCounts> {
  const counts: SealCounts = {};
  await db.transaction(async () => {
    for (const c of SEALED_COLUMNS) {
      const pass = passOver(db, c);
      for (const keys of await pass.keys(sealedFormat(db, c.column, true))) {
        const value = await pass.read(keys);
        if (isSealed(value)) continue;
        await pass.write(keys, box.seal(value, c.context, rowFor(c, keys)));
        counts[`${c.table}.${c.column}`] = (counts[`${c.table}.${c.column}`] ?? 0) + 1;
      }
    }
  })();
  return counts;
}

export interface KeyMismatch {
  /** the key id the database's values were sealed under */
  storedKeyId: string;
  where: string;
}

/**
 * Whether `box` opens what the database holds: no sealed value names another key id, and one value of each column
 * opens. Undefined when it does (or nothing is sealed yet); reads only.
 */
export async function checkSealedKey(db: Db, box: SecretBox): Promise<KeyMismatch | undefined> {
  for (const c of SEALED_COLUMNS) {
    const pass = passOver(db, c);
    const where = `${c.table}.${c.column}`;
    const foreign = await pass.any(`${sealedFormat(db, c.column)} AND substr(${c.column}, 4, 8) <> '${box.keyId}'`);
    if (foreign !== undefined) return { storedKeyId: sealedKeyId(await pass.read(foreign)) ?? '?', where };
    const sampleKeys = await pass.any(sealedFormat(db, c.column));
    const sample = sampleKeys && (await pass.read(sampleKeys));
    if (sample === undefined || !isSealed(sample)) continue;
    try {
      box.open(sample, c.context, rowFor(c, sampleKeys!));
    } catch {
      return { storedKeyId: box.keyId, where };
    }
  }
  return undefined;
}

/** checkSealedKey on a database file, opened read-only (a backup about to be restored). */
export async function checkSealedKeyOfFile(file: string, box: SecretBox): Promise<KeyMismatch | undefined> {
  const db = new SqliteDb(new Database(file, { readonly: true, fileMustExist: true }));
  try {
    return await checkSealedKey(db, box);
  } finally {
    await db.close();
  }
}

/**
 * Opens every value with `from` (plaintext passes through) and seals it with `to`, in one transaction: any value
 * `from` does not open throws and leaves the database as it was.
 */
export async function resealAll(db: Db, from: SecretBox, to: SecretBox): Promise<SealCounts> {
  const counts: SealCounts = {};
  await db.transaction(async () => {
    for (const c of SEALED_COLUMNS) {
      const pass = passOver(db, c);
      for (const keys of await pass.keys()) {
        const value = await pass.read(keys);
        const row = rowFor(c, keys);
        await pass.write(keys, to.seal(isSealed(value) ? from.open(value, c.context, row) : value, c.context, row));
        counts[`${c.table}.${c.column}`] = (counts[`${c.table}.${c.column}`] ?? 0) + 1;
      }
    }
  })();
  return counts;
}

/**
 * After values were rewritten in place, their old bytes can survive in the WAL and in free pages of the file:
 * checkpoint, rebuild the file (VACUUM), and checkpoint again, so neither holds them any more. SQLite only: PostgreSQL's
 * files are the server's (its own VACUUM reclaims them in time).
 */
export function compactAfterRewrite(db: Db): void {
  if (db.dialect !== 'sqlite') return;
  const raw = (db as SqliteDb).sqlite;
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.exec('VACUUM');
  raw.pragma('wal_checkpoint(TRUNCATE)');
}
