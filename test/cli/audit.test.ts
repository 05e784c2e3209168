// The audit log seen through the CLI: every admin command of the CLI (the built binary, against a real daemon) leaves
// an entry naming who, what, when and the request; `gateway audit` lists and filters them; and no secret the test
// created (master key, API keys, webhook signing keys and header values, the S3 secret, a client token) appears in an
// entry, in `gateway audit`'s output, or anywhere in the bytes of the audit table's pages in gateway.db.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUDIT_ACTIONS, type AuditAction } from '../../src/audit/actions.js';
import type { SqliteDb } from '../../src/store/db.js';
import { cliFor } from '../helpers/cli.js';
import { MASTER_KEY, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { readDb } from '../helpers/secrets.js';
import { onPostgres, openDaemonDb } from '../helpers/daemon-db.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);

/** Runs a CLI command that must succeed; returns its stdout. */
async function ok(...args: string[]): Promise<string> {
  const run = await gateway(...args);
  assert.equal(run.code, 0, `gateway ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

async function auditEntries(query = ''): Promise<any[]> {
  const entries: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await daemon.request('GET', `/api/admin/audit?limit=100&offset=${offset}${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    entries.push(...page.body.data);
    if (entries.length >= Number(page.headers.get('X-Total-Count'))) return entries;
  }
}

/** Recorded by the next daemon start after a restore on a stopped daemon (test/cli/backup-restore.test.ts). */
const NOT_FROM_THIS_CLI: ReadonlySet<AuditAction> = new Set(['backup.restore']);

describe('gateway audit', () => {
  const secrets: Record<string, string> = { masterKey: MASTER_KEY };

  test('every admin command of the CLI is recorded with who, what, when and the request; nothing secret', async () => {
    const startedAt = Date.now();
    await ok('sessions', 'create', 'audited', '--engine', 'sandbox', '--proxy', 'http://proxyuser:proxy-pass-7c1e9a@127.0.0.1:3128');
    secrets.proxyPassword = 'proxy-pass-7c1e9a';
    await ok('sessions', 'start', 'audited');
    await ok('sessions', 'stop', 'audited');
    await ok('sessions', 'restart', 'audited');
    await ok('sessions', 'pair', 'audited', '--code', '+15550007001', '--no-wait');
    await ok('sessions', 'logout', 'audited');
    await ok('sessions', 'calls', 'audited', '--reject', '--reply', 'no calls, please write');

    const key = JSON.parse(await ok('--json', 'keys', 'create', 'ops-bot', '--scopes', 'sessions:manage,sessions:read'));
    secrets.apiKey = key.key;
    // the same CLI with an API key: the entry names the key, not the master key
    const asKey = await gateway('--master-key', key.key, 'sessions', 'create', 'by-key', '--engine', 'sandbox');
    assert.equal(asKey.code, 0, asKey.stderr);
    const refused = await gateway('--master-key', key.key, 'keys', 'create', 'escalate', '--scopes', '*');
    assert.equal(refused.code, 1);

    const webhook = JSON.parse(
      await ok('--json', 'webhooks', 'create', 'http://127.0.0.1:9/hook?token=url-token-8e3f1a', '--events', 'session.status', '--header', 'Authorization: Bearer header-secret-55aa01', '--attempts', '5', '--delay', '60'),
    );
    secrets.webhookKey = webhook.hmacKey;
    secrets.headerValue = 'header-secret-55aa01';
    secrets.urlToken = 'url-token-8e3f1a';
    const own = JSON.parse(await ok('--json', 'webhooks', 'create', 'http://127.0.0.1:9/other', '--hmac-key', 'own-signing-key-9d7e6f5a4b'));
    secrets.ownWebhookKey = own.hmacKey;
    await ok('webhooks', 'update', String(webhook.id), '--header', 'X-Token: rotated-header-0b9c8d', '--hmac-key', 'rotated-signing-key-3e2d1c0b', '--events', 'session.status,session.qr');
    secrets.rotatedHeader = 'rotated-header-0b9c8d';
    secrets.rotatedKey = 'rotated-signing-key-3e2d1c0b';
    // the lifecycle above queued session.status deliveries to an address that refuses them: retry one by hand
    await ok('sessions', 'start', 'audited');
    const deliveries = await waitFor(async () => {
      const rows = (await daemon.request('GET', `/api/webhooks/${webhook.id}/deliveries`)).body.data as Array<{ id: string }>;
      return rows.length ? rows : undefined;
    }, 15_000, 'a delivery to retry');
    await ok('webhooks', 'retry', String(webhook.id), deliveries[0]!.id);
    await ok('webhooks', 'delete', String(own.id));

    await ok('client-rules', 'set', 'audited', '--recipient-mode', 'conversation', '--actions', 'send_message', '--origins', 'https://app.example.com');
    const minted = JSON.parse(await ok('--json', 'client-tokens', 'mint', 'audited', 'visitor-7'));
    secrets.clientToken = minted.token;
    await ok('client-rules', 'delete', 'audited');
    await ok('settings', 's3', '--endpoint', 'http://127.0.0.1:9000', '--bucket', 'media', '--access-key', 'AKIDAUDIT', '--secret', 's3-secret-6f5e4d3c2b1a');
    secrets.s3Secret = 's3-secret-6f5e4d3c2b1a';
    await ok('keys', 'exempt', key.id);
    await ok('keys', 'revoke', key.id);
    // one daemon is no cluster (SQLite: NOT_CLUSTERED; PostgreSQL: no such node): refused, and audited as such
    const move = await gateway('sessions', 'move', 'audited', 'elsewhere');
    assert.equal(move.code, 1);
    assert.match(move.stderr, /NOT_CLUSTERED|NODE_NOT_FOUND/);
    await ok('sessions', 'delete', 'audited', '--yes');
    if (onPostgres()) {
      // a PostgreSQL store is backed up with pg_dump: the refusal is audited as a failed backup.create
      const refused = await gateway('backup', join(daemon.dataDir, 'audited-backup.db'));
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /BACKUP_NOT_AVAILABLE/);
    } else await ok('backup', join(daemon.dataDir, 'audited-backup.db'));

    const entries = await auditEntries();
    const recorded = new Set(entries.map((e) => e.action));
    for (const action of AUDIT_ACTIONS) {
      if (NOT_FROM_THIS_CLI.has(action)) continue;
      assert.ok(recorded.has(action), `no audit entry for ${action}; recorded: ${[...recorded].join(', ')}`);
    }
    for (const entry of entries) {
      assert.ok(Date.parse(entry.at) >= startedAt - 1000 && Date.parse(entry.at) <= Date.now(), `time of ${entry.action}`);
      assert.match(entry.requestId, /^[0-9a-f-]{36}$/);
    }
    const find = (action: string, target?: string) => entries.filter((e) => e.action === action && (target === undefined || e.target === target));
    assert.deepEqual(find('session.create', 'audited')[0].actor, { kind: 'master' });
    assert.equal(find('session.start', 'audited').length, 2);
    assert.deepEqual(find('session.create', 'by-key')[0].actor, { kind: 'key', id: key.id, name: 'ops-bot' });
    const escalation = find('key.create').find((e) => e.outcome === 'failed')!;
    assert.deepEqual({ actor: escalation.actor, status: escalation.status, errorCode: escalation.errorCode }, { actor: { kind: 'key', id: key.id, name: 'ops-bot' }, status: 403, errorCode: 'FORBIDDEN_SCOPE' });
    assert.deepEqual(find('key.create', key.id)[0].details, { name: 'ops-bot', scopes: ['sessions:manage', 'sessions:read'], sessions: null, rateLimitPerMinute: null });
    assert.equal(find('key.revoke', key.id).length, 1);
    assert.deepEqual(find('webhook.create', String(webhook.id))[0].details, { host: '127.0.0.1:9', events: ['session.status'], session: null, enabled: true });
    assert.deepEqual(find('webhook.update', String(webhook.id))[0].details.fields.sort(), ['events', 'headers', 'hmacKey']);
    assert.equal(find('webhook.delivery_retry', String(webhook.id))[0].details.deliveryId, deliveries[0]!.id);
    assert.equal(find('webhook.delete', String(own.id)).length, 1);
    assert.deepEqual(find('settings.update')[0].details.fields.sort(), ['s3.accessKeyId', 's3.bucket', 's3.endpoint', 's3.secretAccessKey']);
    assert.equal(find('settings.update')[0].target, null);
    assert.equal(find('client_token.mint', 'audited')[0].details.ephemeralId, 'visitor-7');
    assert.equal(find('session.delete', 'audited')[0].outcome, 'succeeded');

    const text = JSON.stringify(entries);
    for (const [name, secret] of Object.entries(secrets)) assert.ok(!text.includes(secret), `the audit log holds the ${name}`);
  });

  test('`gateway audit` prints a table, filters, and --json gives the entries', async () => {
    const table = await ok('audit', '--limit', '1000');
    assert.match(table, /session\.delete/);
    assert.match(table, /key ops-bot \([0-9a-f-]{36}\)/);
    assert.match(table, /failed: FORBIDDEN_SCOPE/);

    const deletes = JSON.parse(await ok('--json', 'audit', '--action', 'session.delete', '--since', '1h'));
    assert.deepEqual(deletes.map((e: any) => e.target), ['audited']);
    const failed = JSON.parse(await ok('--json', 'audit', '--outcome', 'failed'));
    assert.ok(failed.length >= 1 && failed.every((e: any) => e.outcome === 'failed'));
    const page = await ok('audit', '--limit', '2');
    assert.match(page, /2 of \d+ entries/);
    const future = JSON.parse(await ok('--json', 'audit', '--since', new Date(Date.now() + 3_600_000).toISOString()));
    assert.deepEqual(future, []);

    const bad = await gateway('audit', '--since', 'yesterday');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /ISO 8601/);

    for (const output of [table, JSON.stringify(deletes), JSON.stringify(failed)]) {
      for (const [name, secret] of Object.entries(secrets)) assert.ok(!output.includes(secret), `gateway audit printed the ${name}`);
    }
  });

  test('no secret in the bytes of the audit table and its indexes in gateway.db (on PostgreSQL: in any audit row)', async () => {
    assert.ok(Object.keys(secrets).length >= 10, 'the secrets of the first test were collected');
    assert.equal(await daemon.stop(), 0);
    if (onPostgres()) {
      const db = openDaemonDb(daemon.dataDir);
      const rows = JSON.stringify(await db.prepare('SELECT * FROM audit_log').all());
      await db.close();
      assert.ok(rows.includes('ops-bot') && rows.includes('session.pairing_code'), 'the scan reads the audit rows');
      for (const [name, secret] of Object.entries(secrets)) assert.ok(!rows.includes(secret), `an audit row holds the ${name}`);
      return;
    }
    // stopped: the WAL is checkpointed into gateway.db; read the pages SQLite says belong to the audit log
    const { pages, pageSize } = await readDb(daemon.dataDir, async (db) => ({
      pages: await db.prepare<number>("SELECT pageno FROM dbstat WHERE name = 'audit_log' OR name LIKE 'audit_log%'").pluck().all(),
      pageSize: (db as SqliteDb).sqlite.pragma('page_size', { simple: true }) as number,
    }));
    const file = readFileSync(join(daemon.dataDir, 'gateway.db'));
    const bytes = Buffer.concat(pages.map((n) => file.subarray((n - 1) * pageSize, n * pageSize)));
    assert.ok(pages.length >= 5, `audit pages: ${pages.length}`);
    assert.ok(bytes.includes(Buffer.from('ops-bot')) && bytes.includes(Buffer.from('session.pairing_code')), 'the scan reads the audit rows');
    for (const [name, secret] of Object.entries(secrets)) assert.ok(!bytes.includes(Buffer.from(secret)), `the audit table's pages hold the ${name}`);
  });
});
