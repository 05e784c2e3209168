// Secrets at rest, seen from outside the daemon: the bytes of gateway.db (and its -wal/-shm) scanned for known secrets,
// and sealed values read back with the data key the daemon derives.
import { createHmac } from 'node:crypto';
import { openDaemonDb } from './daemon-db.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../../src/store/db.js';
import { isSealed, secretBoxFor } from '../../src/auth/secret-box.js';
import { contextOf, rowOf, SEALED_COLUMNS } from '../../src/store/sealed-columns.js';
import { MASTER_KEY } from './daemon.js';

export const DB_FILES = ['gateway.db', 'gateway.db-wal', 'gateway.db-shm'];

/** The database's files as they are now: what someone copying the data directory gets. */
export function copyDbFiles(dataDir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of DB_FILES) {
    const path = join(dataDir, name);
    if (existsSync(path)) files.set(name, readFileSync(path));
  }
  return files;
}

/** `name in file` for every secret whose bytes (UTF-8, or the Buffer itself) occur in one of the files. */
export function leaks(files: Map<string, Buffer>, secrets: Record<string, string | Buffer>): string[] {
  const found: string[] = [];
  for (const [name, secret] of Object.entries(secrets)) {
    const needle = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    if (needle.length < 8) throw new Error(`secret ${name} is too short to scan for`);
    for (const [file, bytes] of files) if (bytes.includes(needle)) found.push(`${name} in ${file}`);
  }
  return found;
}

export async function readDb<T>(dataDir: string, read: (db: Db) => Promise<T>): Promise<T> {
  const db = openDaemonDb(dataDir, { readonly: true, fileMustExist: true });
  try {
    return await read(db);
  } finally {
    await db.close();
  }
}

/** A stored value as the daemon reads it: opened when sealed (with the key the daemon derives), as is when plaintext. */
export async function storedValue(
  dataDir: string,
  table: string,
  column: string,
  where: string,
  auth: { masterKey?: string; encryptionKey?: string } = { masterKey: MASTER_KEY },
): Promise<string | undefined> {
  const c = SEALED_COLUMNS.find((s) => s.table === table && s.column === column)!;
  const row = await readDb(dataDir, (db) => db.prepare(`SELECT ${c.key.join(', ')}, ${column} FROM ${table} WHERE ${where}`).raw().get());
  const raw = row?.[row.length - 1] as string | null | undefined;
  if (raw === undefined || raw === null) return undefined;
  return isSealed(raw) ? secretBoxFor(auth).open(raw, contextOf(table, column), c.boundToRow ? rowOf(row!.slice(0, -1)) : undefined) : raw;
}

/** Rewrites every sealed value as the plaintext an earlier version stored, in place: an old database. */
export async function unsealAll(dataDir: string, auth: { masterKey?: string; encryptionKey?: string } = { masterKey: MASTER_KEY }): Promise<number> {
  const box = secretBoxFor(auth);
  const db = openDaemonDb(dataDir, { fileMustExist: true });
  let count = 0;
  try {
    await db.transaction(async () => {
      for (const c of SEALED_COLUMNS) {
        const rows = await db.prepare(`SELECT ${c.key.join(', ')}, ${c.column} FROM ${c.table} WHERE ${c.column} IS NOT NULL`).raw().all();
        const update = db.prepare(`UPDATE ${c.table} SET ${c.column} = ? WHERE ${c.key.map((k) => `${k} = ?`).join(' AND ')}`);
        for (const row of rows) {
          const value = row[row.length - 1] as string;
          if (!isSealed(value)) continue;
          await update.run(box.open(value, c.context, c.boundToRow ? rowOf(row.slice(0, -1)) : undefined), ...row.slice(0, -1));
          count += 1;
        }
      }
    })();
  } finally {
    await db.close();
  }
  return count;
}

export const hmacHex = (key: string, body: Buffer): string => createHmac('sha256', key).update(body).digest('hex');
