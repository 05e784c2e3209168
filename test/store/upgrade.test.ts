// Upgrades from every schema version in the repository: a database built at version k (by migrations 1..k, one row in
// every table) is migrated by a real daemon starting on it, and its data reads back through the API. A daemon started
// on a database newer than itself refuses to start, says why, and leaves the file as it was.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/database-file.js';
import { BIN, MASTER_KEY, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { buildAtVersion, OLD, OLD_RAW, rowCounts } from './fixtures/schema-fixtures.js';
import { storedValue } from '../helpers/secrets.js';

const S = `/api/sessions/${OLD.session}`;

/** What each table's row looks like through the API once migrated (tables with no read route are counted in SQL). */
const READ_BACK: Record<string, (daemon: TestDaemon) => Promise<void>> = {
  sessions: async (d) => {
    const session = (await d.request('GET', S)).body.data;
    assert.equal(session.phoneNumber, OLD.phone);
  },
  // the stored credentials bring the session back CONNECTED without pairing
  auth_state: async (d) => {
    await waitFor(async () => (await d.request('GET', S)).body.data.status === 'CONNECTED', 15_000, 'the old session CONNECTED');
  },
  api_keys: async (d) => {
    assert.ok((await d.request('GET', '/api/admin/keys')).body.data.some((k: { id: string }) => k.id === OLD.apiKeyId));
    assert.equal((await d.request('GET', '/api/sessions', undefined, OLD.apiKey)).status, 200, 'the old API key still authenticates');
  },
  settings: async (d) => {
    const settings = (await d.request('GET', '/api/admin/settings')).body.data;
    assert.equal(settings.s3.bucket, OLD.bucket);
    assert.equal(settings.s3.secretAccessKeySet, true);
  },
  webhooks: async (d) => {
    const hook = await d.request('GET', '/api/webhooks/1');
    assert.equal(hook.status, 200);
    assert.equal(hook.body.data.url, OLD.webhookUrl);
  },
  deliveries: async (d) => {
    const log = (await d.request('GET', '/api/webhooks/1/deliveries')).body.data;
    assert.ok(log.some((x: { id: string; lastStatusCode: number }) => x.id === OLD.deliveryId && x.lastStatusCode === 500));
  },
  // an event an old run left to fan out: its delivery is written after the start
  fanouts: async (d) => {
    await waitFor(async () => ((await d.request('GET', '/api/webhooks/1/deliveries')).body.data as Array<{ eventId: string }>).some((x) => x.eventId === 'evt-old-2'), 5000, 'the fanned-out delivery');
  },
  // found in the store: starring it needs no `fromMe` (a message the gateway has not stored is a 400 asking for it)
  messages: async (d) => {
    const starred = await d.request('POST', `${S}/messages/star`, { chatId: OLD.peer, messageId: OLD.messageId });
    assert.equal(starred.status, 200, JSON.stringify(starred.body));
    const unknown = await d.request('POST', `${S}/messages/star`, { chatId: OLD.peer, messageId: 'MSGNEVERSTORED' });
    assert.equal(unknown.status, 400);
  },
  media: async (d) => {
    const media = await d.request('GET', `${S}/media/${OLD.mediaId}`);
    assert.equal(media.status, 200, JSON.stringify(media.body));
    assert.equal(media.body.data.mimeType, 'image/jpeg');
  },
  client_rules: async (d) => {
    const rules = (await d.request('GET', `${S}/client-rules`)).body.data;
    assert.equal(rules.dailySendCap, 70);
  },
  // a pair the session learnt: answered from the store (its origin too, when the version recorded it)
  identities: async (d) => {
    const identity = await d.request('GET', `${S}/contacts/${OLD.contact}/identity`);
    assert.equal(identity.status, 200, JSON.stringify(identity.body));
    assert.equal(identity.body.data.lid, '170000000000001@lid');
    assert.ok([null, 'message'].includes(identity.body.data.source), identity.body.data.source);
  },
  contacts: async (d) => {
    const contact = await d.request('GET', `${S}/contacts/${OLD.contact}`);
    assert.equal(contact.status, 200, JSON.stringify(contact.body));
    assert.equal(contact.body.data.savedName, 'Carol Old');
  },
  presences: async (d) => {
    const list = (await d.request('GET', `${S}/presence`)).body.data;
    assert.ok(JSON.stringify(list).includes(OLD.contact.split('@')[0]!), JSON.stringify(list));
  },
  labels: async (d) => {
    const list = (await d.request('GET', `${S}/labels`)).body.data;
    assert.ok(list.some((l: { name: string }) => l.name === 'VIP'), JSON.stringify(list));
  },
  // the session's numbering goes on after the stored event: what the restored session emits follows it
  event_log: async (d) => {
    const events = (await d.request('GET', `/api/events?session=${OLD.session}`)).body.data.events;
    assert.deepEqual([events[0].id, events[0].seq], ['evt-old-3', 1]);
    assert.deepEqual(events.map((e: { seq: number }) => e.seq), events.map((_: unknown, i: number) => i + 1));
  },
  // built before the chat list, the peer's chat is made from the stored message; after, by the trigger
  chats: async (d) => {
    const chat = (await d.request('GET', `${S}/chats/${OLD.peer}`)).body.data;
    assert.deepEqual([chat.lastMessage?.messageId, chat.lastMessage?.text, chat.lastMessage?.fromMe], [OLD.messageId, 'hello from an old version', true]);
  },
  message_activity: async (d) => {
    const message = (await d.request('GET', `${S}/messages/${OLD.messageId}`)).body.data;
    assert.deepEqual(message.acks.filter((a: { status: string }) => a.status === 'read').map((a: { by: string }) => a.by), [OLD.peer], JSON.stringify(message));
  },
  // the old message is found by search once the indexer has caught up (built before search, the migration lists it)
  message_search: async (d) => {
    await waitFor(async () => {
      const found = (await d.request('GET', `${S}/messages/search?q=hello%20old%20version`)).body.data.results;
      return found.some((r: { message: { messageId: string } }) => r.message.messageId === OLD.messageId) || undefined;
    }, 10_000, 'the old message found by search');
  },
  // a send queued by the old version goes out after the upgrade, under the id chosen when it was queued
  send_queue: async (d) => {
    await waitFor(async () => (await d.request('GET', `${S}/messages/3EB0QUEUEDOLD000000000001`)).status === 200, 15_000, 'the queued send sent');
    assert.equal((await d.request('GET', `${S}/queue`)).body.data.length, 0);
  },
  audit_log: async (d) => {
    const entries = (await d.request('GET', `/api/admin/audit?target=${OLD.session}`)).body.data;
    assert.deepEqual(entries.map((e: { action: string; actor: unknown }) => [e.action, e.actor]), [['session.create', { kind: 'key', id: OLD.apiKeyId, name: 'old-key' }]]);
  },
  label_chats: async (d) => {
    const chats = (await d.request('GET', `${S}/labels/${OLD.labelId}/chats`)).body.data;
    assert.ok(JSON.stringify(chats).includes(OLD.contact.split('@')[0]!), JSON.stringify(chats));
  },
};

describe('upgrades from every schema version', () => {
  for (const { version } of MIGRATIONS) {
    test(`schema version ${version} → ${LATEST_SCHEMA_VERSION}: every table's data reads back`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), `gateway-upgrade-${version}-`));
      let daemon: TestDaemon | undefined;
      try {
        const tables = buildAtVersion(dataDir, version);
        const before = rowCounts(join(dataDir, 'gateway.db'));
        daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'warn' } });
        // auth_state first: later checks (messages, labels) need the session CONNECTED
        for (const table of ['auth_state', ...tables.filter((t) => t !== 'auth_state')]) {
          if (!tables.includes(table)) continue;
          const check = READ_BACK[table];
          if (check) await check(daemon).catch((err: Error) => assert.fail(`${table} (built at version ${version}): ${err.message}`));
        }
        assert.equal(await daemon.stop(), 0);
        daemon = undefined;
        const db = new Database(join(dataDir, 'gateway.db'), { readonly: true });
        const applied = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
        db.close();
        assert.deepEqual(applied, MIGRATIONS.map((m) => m.version));
        // nothing was lost on the way, including the tables no route reads 
        const after = rowCounts(join(dataDir, 'gateway.db'));
        // fanouts and send_queue are queues: their rows become deliveries and sent messages (READ_BACK checks that one did)
        for (const table of tables.filter((t) => t !== 'fanouts' && t !== 'send_queue')) assert.ok(after[table]! >= before[table]!, `${table}: ${before[table]} row(s) before, ${after[table]} after`);
        // the media key and the poll secret (alone, and in the protocol copy) are sealed, bound to their rows, and open as they were
        if (tables.includes('messages')) {
          const sealed = new Database(join(dataDir, 'gateway.db'), { readonly: true });
          const stored = [
            ...(sealed.prepare('SELECT secret, raw FROM messages WHERE id = ?').raw().all(OLD.messageId) as string[][]).flat(),
            ...(sealed.prepare('SELECT ref FROM media').pluck().all() as string[]),
          ];
          sealed.close();
          assert.ok(stored.length === 3 && stored.every((v) => v.startsWith('v2:')), JSON.stringify(stored));
          const message = `id = '${OLD.messageId}'`;
          assert.equal(await storedValue(dataDir, 'messages', 'secret', message), OLD.pollSecret);
          assert.equal(await storedValue(dataDir, 'messages', 'raw', message), OLD_RAW);
          assert.equal(await storedValue(dataDir, 'media', 'ref', `id = '${OLD.mediaId}'`), OLD.mediaRef);
        }
      } finally {
        await daemon?.kill();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }

  test('every table a migration creates has a read-back check or is counted (no table is left unchecked by accident)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-upgrade-latest-'));
    try {
      const tables = buildAtVersion(dataDir, LATEST_SCHEMA_VERSION);
      // no route reads these from the store alone (a channel list asks the network, which drops channels it does not know;
      // nodes and session leases are read by daemons on PostgreSQL only)
      const counted = ['correspondents', 'client_daily_sends', 'channels', 'nodes', 'session_leases', 'idempotency_keys', 'message_search_indexed'];
      assert.deepEqual(tables.filter((t) => !READ_BACK[t] && !counted.includes(t)), [], 'give the new table a READ_BACK check (or count it, when no route reads it)');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a database newer than this build', () => {
  test('the daemon refuses to start, says why, and leaves the file as it was', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-newer-'));
    try {
      buildAtVersion(dataDir, LATEST_SCHEMA_VERSION);
      const file = join(dataDir, 'gateway.db');
      const db = new Database(file);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST_SCHEMA_VERSION + 1, 'from-the-future', new Date().toISOString());
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.pragma('journal_mode = DELETE');
      db.close();
      const bytes = readFileSync(file);
      const mode = statSync(file).mode;
      const failure = await new Promise<{ code: number | null; stderr: string }>((done) => {
        execFile(process.execPath, [BIN, 'serve'], { cwd: dataDir, env: { PATH: process.env.PATH, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_DATA_DIR: dataDir, GATEWAY_PORT: '0' }, timeout: 30_000 }, (err, _stdout, stderr) =>
          done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
        );
      });
      assert.equal(failure.code, 4, failure.stderr);
      assert.match(failure.stderr, new RegExp(`schema version ${LATEST_SCHEMA_VERSION + 1}, newer than this build of the gateway knows \\(${LATEST_SCHEMA_VERSION}\\)`));
      assert.match(failure.stderr, /nothing was changed/);
      assert.ok(readFileSync(file).equals(bytes), 'the database file changed');
      assert.equal(statSync(file).mode, mode);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
