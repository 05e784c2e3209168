// Issue 22, first part: the PostgreSQL texts of the migrations build the same schema as SQLite's, on a real server
// (Debian's postgresql, started by the test), and migrating is safe when several daemons start at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/db.js';
import { LATEST_SCHEMA_VERSION, SchemaTooNewError } from '../../src/store/database-file.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

/** every version, in order (a branch's migration may leave a gap until the branches meet) */
const ALL_VERSIONS = MIGRATIONS.map((m) => m.version);
import { connectPostgres, migratePostgres, type PgSql } from '../../src/store/postgres.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/** Columns PostgreSQL has that SQLite gives implicitly: deliveries.seq is SQLite's rowid (insertion order). */
const POSTGRES_ONLY = new Set(['deliveries.seq']);
/**
 * Message search is each store's own (migration 019): SQLite's FTS5 index with the tables that number and feed it,
 * PostgreSQL's GIN index on an expression. test/chats/history.test.ts runs the same searches on both.
 */
const SQLITE_SEARCH = /^(message_search|messages_fts)/;
const POSTGRES_SEARCH = new Set(['messages_search']);

interface Schema {
  /** table → column → nullable */
  columns: Map<string, Map<string, boolean>>;
  /** table → primary key columns, in order */
  primaryKeys: Map<string, string[]>;
  /** index → its columns, UNIQUE or not, and its WHERE (normalised) */
  indexes: Map<string, string>;
}

/** `status = 'pending'` and PostgreSQL's `(status = 'pending'::text)` read alike */
const predicate = (where: string | undefined) => (where ?? '').toLowerCase().replace(/::text|[()\s]/g, '');

let server: TestPostgres;
const connections: PgSql[] = [];

before(async () => {
  server = await startPostgres();
});

after(async () => {
  await Promise.all(connections.map((sql) => sql.end()));
  server?.stop();
});

function connect(url: string): PgSql {
  const sql = connectPostgres(url, { max: 2 });
  connections.push(sql);
  return sql;
}

function sqliteSchema(): Schema {
  const db = new Database(':memory:');
  migrate(db);
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[]).filter(
    (name) => !SQLITE_SEARCH.test(name),
  );
  const columns = new Map<string, Map<string, boolean>>();
  const primaryKeys = new Map<string, string[]>();
  for (const table of tables) {
    const info = db.prepare('SELECT name, "notnull", pk FROM pragma_table_info(?)').all(table) as Array<{ name: string; notnull: number; pk: number }>;
    // a primary key column is never null in PostgreSQL; in SQLite only when declared so, or in a WITHOUT ROWID table
    columns.set(table, new Map(info.map((c) => [c.name, c.notnull === 0 && c.pk === 0])));
    primaryKeys.set(table, info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name));
  }
  const indexes = new Map<string, string>();
  for (const { name, sql, tbl_name: table } of db.prepare("SELECT name, sql, tbl_name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'").all() as Array<{ name: string; sql: string; tbl_name: string }>) {
    if (SQLITE_SEARCH.test(table)) continue;
    const columns = (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').pluck().all(name) as string[]).join(',');
    indexes.set(name, `${/^CREATE UNIQUE/i.test(sql) ? 'unique ' : ''}(${columns}) ${predicate(/\bWHERE\b(.*)$/is.exec(sql)?.[1])}`);
  }
  db.close();
  return { columns, primaryKeys, indexes };
}

async function postgresSchema(sql: PgSql): Promise<Schema> {
  const rows = await sql<Array<{ table_name: string; column_name: string; is_nullable: string }>>`
    SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY ordinal_position`;
  const columns = new Map<string, Map<string, boolean>>();
  for (const row of rows) {
    if (POSTGRES_ONLY.has(`${row.table_name}.${row.column_name}`)) continue;
    if (!columns.has(row.table_name)) columns.set(row.table_name, new Map());
    columns.get(row.table_name)!.set(row.column_name, row.is_nullable === 'YES');
  }
  const keys = await sql<Array<{ table_name: string; column_name: string }>>`
    SELECT k.table_name, k.column_name FROM information_schema.table_constraints c
    JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema
    WHERE c.table_schema = 'public' AND c.constraint_type = 'PRIMARY KEY' ORDER BY k.table_name, k.ordinal_position`;
  const primaryKeys = new Map<string, string[]>();
  for (const key of keys) primaryKeys.set(key.table_name, [...(primaryKeys.get(key.table_name) ?? []), key.column_name]);
  // the indexes PostgreSQL makes for PRIMARY KEY and UNIQUE constraints are SQLite's sqlite_autoindex_* ones; a trailing
  // seq stands for the rowid that ends every SQLite index
  const indexes = new Map<string, string>();
  const defs = await sql<Array<{ indexname: string; indexdef: string }>>`
    SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
    AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE contype IN ('p', 'u'))`;
  for (const { indexname, indexdef } of defs) {
    if (POSTGRES_SEARCH.has(indexname)) continue;
    const [, unique, columns, where] = /^CREATE (UNIQUE )?INDEX \S+ ON \S+ USING btree \(([^)]*)\)(?: WHERE (.*))?$/s.exec(indexdef)!;
    const names = columns!.split(',').map((c) => c.trim().replace(/"/g, '')).filter((c, i, all) => !(c === 'seq' && i === all.length - 1));
    indexes.set(indexname, `${unique ? 'unique ' : ''}(${names.join(',')}) ${predicate(where)}`);
  }
  return { columns, primaryKeys, indexes };
}

const sorted = <T>(map: Map<string, T>) => [...map.entries()].sort(([a], [b]) => a.localeCompare(b));

test('the PostgreSQL migrations build the schema SQLite has: tables, columns, nullability, primary keys, indexes', async () => {
  const sql = connect(server.createDatabase('parity'));
  assert.deepEqual(await migratePostgres(sql), ALL_VERSIONS);
  const lite = sqliteSchema();
  const pg = await postgresSchema(sql);
  assert.deepEqual(sorted(pg.columns).map(([t, c]) => [t, sorted(c)]), sorted(lite.columns).map(([t, c]) => [t, sorted(c)]));
  assert.deepEqual(sorted(pg.primaryKeys), sorted(lite.primaryKeys));
  assert.deepEqual(sorted(pg.indexes), sorted(lite.indexes));
});

test('daemons migrating one database at once apply each migration once; a second run applies nothing', async () => {
  const url = server.createDatabase('concurrent');
  const [first, second, third] = [connect(url), connect(url), connect(url)];
  const results = await Promise.all([migratePostgres(first), migratePostgres(second), migratePostgres(third)]);
  assert.deepEqual(results.map((applied) => applied.length).sort(), [0, 0, ALL_VERSIONS.length]);
  assert.deepEqual(await migratePostgres(first), []);
  const versions = await first<Array<{ version: number }>>`SELECT version FROM schema_migrations ORDER BY version`;
  assert.deepEqual(versions.map((row) => row.version), ALL_VERSIONS);
});

test('an older database is brought up to date, one migrated by a newer build is refused unchanged', async () => {
  const sql = connect(server.createDatabase('upgrades'));
  assert.deepEqual(await migratePostgres(sql, 5), [1, 2, 3, 4, 5]);
  assert.deepEqual(await migratePostgres(sql), ALL_VERSIONS.filter((v) => v > 5));
  await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${LATEST_SCHEMA_VERSION + 1}, 'from-the-future', 'x')`;
  await assert.rejects(migratePostgres(sql), SchemaTooNewError);
  const count = await sql<Array<{ n: number }>>`SELECT COUNT(*)::int AS n FROM schema_migrations`;
  assert.equal(count[0]!.n, ALL_VERSIONS.length + 1);
});

test('times in ms come back as numbers, as SQLite gives them', async () => {
  const sql = connect(server.createDatabase('types'));
  await migratePostgres(sql);
  const at = Date.UTC(2026, 10, 25, 12, 0, 0, 123);
  await sql`INSERT INTO sessions (name, engine, created_at, updated_at) VALUES ('s', 'sandbox', 'now', 'now')`;
  await sql`INSERT INTO identities (session, pn, lid, used_at) VALUES ('s', '1555', '99@lid', ${at})`;
  const [row] = await sql<Array<{ used_at: number }>>`SELECT used_at FROM identities WHERE session = 's'`;
  assert.equal(row!.used_at, at);
  assert.equal(typeof row!.used_at, 'number');
});
