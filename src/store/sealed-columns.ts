// The columns holding secrets sealed at rest, and the whole-table passes over them: seal plaintext rows left by an
// older version, check the key against what is stored, re-seal under a new key, and compact the file afterwards.
import { isSealed, sealedKeyId, type SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';

export interface SealedColumn {
  table: string;
  column: string;
  /** the columns naming one row */
  key: string[];
  /** bound to every value of the column as AES-GCM additional data */
  context: string;
}

/** Every column whose values are sealed. Its repository seals on write and opens on read with the same context. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'auth_state', column: 'value', key: ['session', 'key'], context: 'auth_state.value' },
  { table: 'webhooks', column: 'hmac_key', key: ['id'], context: 'webhooks.hmac_key' },
  { table: 'webhooks', column: 'headers', key: ['id'], context: 'webhooks.headers' },
  { table: 'settings', column: 'value', key: ['key'], context: 'settings.value' },
  { table: 'sessions', column: 'proxy', key: ['name'], context: 'sessions.proxy' },
];

export const contextOf = (table: string, column: string): string => {
  const found = SEALED_COLUMNS.find((c) => c.table === table && c.column === column);
  if (!found) throw new Error(`${table}.${column} is not a sealed column`);
  return found.context;
};

export type SealCounts = Record<string, number>;

interface Pass {
  rows(): Iterable<{ keys: unknown[]; value: string }>;
  write(keys: unknown[], value: string): void;
}

function passOver(db: Db, c: SealedColumn): Pass {
  const select = db.prepare(`SELECT ${c.key.join(', ')}, ${c.column} AS value FROM ${c.table} WHERE ${c.column} IS NOT NULL`).raw();
  const update = db.prepare(`UPDATE ${c.table} SET ${c.column} = ? WHERE ${c.key.map((k) => `${k} = ?`).join(' AND ')}`);
  return {
    *rows() {
      // read whole before writing: better-sqlite3 refuses writes while an iterator is open on the connection
      for (const row of select.all() as unknown[][]) yield { keys: row.slice(0, -1), value: row[row.length - 1] as string };
    },
    write: (keys, value) => update.run(value, ...keys),
  };
}

/**
 * Seals every value still stored in plaintext (written before secrets were encrypted), in one transaction; run on
 * every start, it finds nothing once done. Returns the count per column (empty when nothing was plaintext).
 */
export function sealPlaintextRows(db: Db, box: SecretBox): SealCounts {
  const counts: SealCounts = {};
  db.transaction(() => {
    for (const c of SEALED_COLUMNS) {
      const pass = passOver(db, c);
      for (const { keys, value } of pass.rows()) {
        if (isSealed(value)) continue;
        pass.write(keys, box.seal(value, c.context));
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
 * Whether `box` opens what the database holds: every sealed value names the box's key id, and one value of each
 * column opens. Undefined when it does (or nothing is sealed yet); reads only.
 */
export function checkSealedKey(db: Db, box: SecretBox): KeyMismatch | undefined {
  for (const c of SEALED_COLUMNS) {
    let opened = false;
    for (const { value } of passOver(db, c).rows()) {
      const id = sealedKeyId(value);
      if (id === undefined) continue;
      if (id !== box.keyId) return { storedKeyId: id, where: `${c.table}.${c.column}` };
      if (!opened) {
        try {
          box.open(value, c.context);
        } catch {
          return { storedKeyId: id, where: `${c.table}.${c.column}` };
        }
        opened = true;
      }
    }
  }
  return undefined;
}

/**
 * Opens every value with `from` (plaintext passes through) and seals it with `to`, in one transaction: any value
 * `from` does not open throws and leaves the database as it was.
 */
export function resealAll(db: Db, from: SecretBox, to: SecretBox): SealCounts {
  const counts: SealCounts = {};
  db.transaction(() => {
    for (const c of SEALED_COLUMNS) {
      const pass = passOver(db, c);
      for (const { keys, value } of pass.rows()) {
        const plaintext = isSealed(value) ? from.open(value, c.context) : value;
        pass.write(keys, to.seal(plaintext, c.context));
        counts[`${c.table}.${c.column}`] = (counts[`${c.table}.${c.column}`] ?? 0) + 1;
      }
    }
  })();
  return counts;
}

/**
 * After values were rewritten in place, their old bytes can survive in the WAL and in free pages of the file:
 * checkpoint, rebuild the file (VACUUM), and checkpoint again, so neither holds them any more.
 */
export function compactAfterRewrite(db: Db): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('VACUUM');
  db.pragma('wal_checkpoint(TRUNCATE)');
}
