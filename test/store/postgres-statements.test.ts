// Issue 22, on the way to the PostgreSQL store: every statement the repositories prepare is described by a real
// PostgreSQL (parsed, every name and type resolved against the migrated schema, nothing run), with `?` and `@name`
// parameters numbered as PostgreSQL's `$n`, and the columns it returns must be named as SQLite names them (an unquoted
// camelCase alias comes back lower-cased). The statements that still speak SQLite only are listed below with the reason;
// the list must shrink as the port goes on, and a new statement that does not port fails here.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { createSecretBox } from '../../src/auth/secret-box.js';
import { createAuditRepo } from '../../src/store/audit.js';
import { createAuthStateRepo } from '../../src/store/auth-state.js';
import { createChannelsRepo } from '../../src/store/channels.js';
import { createClientRulesRepo } from '../../src/store/client-rules.js';
import { createContactsRepo } from '../../src/store/contacts.js';
import { migrate, SqliteDb, type Db } from '../../src/store/db.js';
import { createIdentitiesRepo } from '../../src/store/identities.js';
import { createKeysRepo } from '../../src/store/keys.js';
import { createLabelsRepo } from '../../src/store/labels.js';
import { createMediaRepo } from '../../src/store/media.js';
import { createMessagesRepo } from '../../src/store/messages.js';
import { createChatsRepo } from '../../src/store/chats.js';
import { createMessageActivityRepo } from '../../src/store/message-activity.js';
import { createEventLogRepo } from '../../src/store/event-log.js';
import { createIdempotencyRepo } from '../../src/store/idempotency.js';
import { createOutboxRepo } from '../../src/store/outbox.js';
import { connectPostgres, migratePostgres, type PgSql } from '../../src/store/postgres.js';
import { numberParameters } from '../../src/store/pg-db.js';
import { createPresenceRepo } from '../../src/store/presence.js';
import { createSessionsRepo } from '../../src/store/sessions.js';
import { createSettingsRepo } from '../../src/store/settings.js';
import { createWebhooksRepo } from '../../src/store/webhooks.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/** Statements that run on SQLite only: a part of their text, the PostgreSQL error they must fail with, what the port needs. */
const SQLITE_ONLY: Array<[text: string, error: string, why: string]> = [
  ['FROM json_each(api_keys.sessions)', 'function json_each(text) does not exist', "a key's sessions are a JSON text: PostgreSQL reads it with jsonb_array_elements_text"],
  ["id GLOB '[0-9]*'", 'syntax error at or near "GLOB"', "the next numeric label id: PostgreSQL needs id ~ '^[0-9]+$' and a numeric cast (CAST of a non-number raises there)"],
  ['rowid', 'column "rowid" does not exist', "insertion order of deliveries: PostgreSQL's deliveries have a seq column for it"],
  // message search is each store's own (migration 019): these are SQLite's; PostgreSQL's runs in the PostgreSQL pass
  // of test/chats/history.test.ts
  ['messages_fts MATCH ?', 'syntax error at or near "MATCH"', "SQLite's FTS5 search; PostgreSQL searches a tsvector expression's GIN index"],
  ['SELECT up_to FROM message_search_indexed', 'relation "message_search_indexed" does not exist', 'the FTS5 batch indexer (SQLite only)'],
  ['UPDATE message_search_indexed', 'relation "message_search_indexed" does not exist', 'the FTS5 batch indexer (SQLite only)'],
  ['SELECT MAX(rowid) FROM (SELECT rowid FROM message_search', 'subquery in FROM must have an alias', 'the FTS5 batch indexer (SQLite only)'],
  ['INSERT INTO messages_fts', 'relation "messages_fts" does not exist', 'the FTS5 batch indexer (SQLite only)'],
  ['IN (SELECT value FROM json_each(?))', 'operator does not exist: text = json', "several credential keys in one read: PostgreSQL's statement takes them with jsonb_array_elements_text"],
];

let server: TestPostgres;
let sql: PgSql;

before(async () => {
  server = await startPostgres();
  sql = connectPostgres(server.url, { max: 1 });
  await migratePostgres(sql);
});

after(async () => {
  await sql?.end({ timeout: 1 });
  server?.stop();
});

/** Every statement the repositories prepare when they are made (statements built later, per call, are not seen). */
function preparedStatements(): Array<{ repo: string; text: string; columns: string[]; plucked: boolean }> {
  const db = new Database(':memory:');
  migrate(db);
  const box = createSecretBox(Buffer.alloc(32, 1));
  const seen: Array<{ repo: string; text: string; columns: string[]; plucked: boolean }> = [];
  const sqlite = new SqliteDb(db);
  const recording = (repo: string): Db =>
    new Proxy(sqlite, {
      get(target, key) {
        if (key === 'prepare') {
          return (text: string) => {
            const statement = db.prepare(text);
            const prepared = target.prepare(text);
            const entry = { repo, text, columns: statement.reader ? statement.columns().map((c) => c.name) : [], plucked: false };
            seen.push(entry);
            // a plucked statement answers its first column's value: its name does not matter
            return new Proxy(prepared, {
              get: (stmt, name) => (name === 'pluck' ? () => ((entry.plucked = true), stmt.pluck()) : (Reflect.get(stmt, name, stmt) as unknown)),
            });
          };
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  createAuditRepo(recording('audit'));
  createAuthStateRepo(recording('auth-state'), box);
  createChannelsRepo(recording('channels'));
  createClientRulesRepo(recording('client-rules'));
  createContactsRepo(recording('contacts'));
  createIdentitiesRepo(recording('identities'));
  createKeysRepo(recording('keys'));
  createLabelsRepo(recording('labels'));
  createMediaRepo(recording('media'), box);
  createMessagesRepo(recording('messages'), box);
  createChatsRepo(recording('chats'));
  createMessageActivityRepo(recording('message-activity'));
  createEventLogRepo(recording('event-log'));
  createIdempotencyRepo(recording('idempotency'));
  createOutboxRepo(recording('outbox'));
  createPresenceRepo(recording('presence'));
  createSessionsRepo(recording('sessions'), box);
  createSettingsRepo(recording('settings'), box);
  createWebhooksRepo(recording('webhooks'), box);
  db.close();
  return seen;
}

test('parameters are numbered outside quotes only, a named one keeping its number', () => {
  assert.equal(numberParameters("SELECT ? , '?' , @a, @b, @a, \"x?\" WHERE y = ?").text, "SELECT $1 , '?' , $2, $3, $2, \"x?\" WHERE y = $4");
});

test('every statement of the repositories is valid PostgreSQL against the migrated schema, but those listed as SQLite-only', async () => {
  const statements = preparedStatements();
  assert.ok(statements.length > 100, `only ${statements.length} statements were seen`);
  const failing: Array<{ repo: string; text: string; error: string }> = [];
  for (const { repo, text, columns, plucked } of statements) {
    let error: string | undefined;
    try {
      const described = await sql.unsafe(numberParameters(text).text).describe();
      const names = (described.columns ?? []).map((c: { name: string }) => c.name);
      if (!plucked && names.join() !== columns.join()) error = `returns columns ${names.join(', ')} where SQLite returns ${columns.join(', ')}`;
    } catch (err) {
      error = (err as Error).message;
    }
    if (error) failing.push({ repo, text: text.replace(/\s+/g, ' ').trim(), error });
  }
  const listed = (f: { text: string; error: string }) => SQLITE_ONLY.some(([part, error]) => f.text.includes(part) && f.error === error);
  const unexpected = failing.filter((f) => !listed(f));
  assert.deepEqual(unexpected.map((f) => `${f.repo}: ${f.error}: ${f.text}`), [], 'these statements do not run on PostgreSQL');
  const stale = SQLITE_ONLY.filter(([part, error]) => !failing.some((f) => f.text.includes(part) && f.error === error));
  assert.deepEqual(stale, [], 'these now run on PostgreSQL: take them off the SQLite-only list');
});
