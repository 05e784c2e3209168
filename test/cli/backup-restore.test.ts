// `gateway backup` under a send load and `gateway restore` into a new data directory: the copy holds every send whole
// (its message row and its webhook delivery, or neither), the restored daemon brings the sessions back CONNECTED with
// no pairing, and delivers every event recorded before the backup to a real receiver. Restore refuses what it must.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { freePort, MASTER_KEY, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { daemonEnv, runCli } from '../helpers/cli.js';
import { hmacHex } from '../helpers/secrets.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { LATEST_SCHEMA_VERSION } from '../../src/store/database-file.js';

const A = '+15550410001';
const B = '+15550410002';
const HMAC_KEY = 'whsec-backup-restore-3c1f9e';

/** messageIds of message.sent deliveries and message rows sent by session a, in a database file */
function sendsIn(file: string): { messages: Set<string>; deliveries: Set<string> } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const messages = new Set(db.prepare("SELECT id FROM messages WHERE session = 'a' AND from_me = 1").pluck().all() as string[]);
    const bodies = db.prepare("SELECT body FROM deliveries WHERE event = 'message.sent'").pluck().all() as string[];
    return { messages, deliveries: new Set(bodies.map((body) => JSON.parse(body).payload.messageId as string)) };
  } finally {
    db.close();
  }
}

describe('backup under load, restore into a new data directory', () => {
  let receiver: Receiver;
  let first: TestDaemon;
  let second: TestDaemon | undefined;
  const work = mkdtempSync(join(tmpdir(), 'gateway-backup-'));
  const copy = join(work, 'copy.db');
  const restoredDir = join(work, 'restored');
  const before_: string[] = [];

  before(async () => {
    receiver = await startReceiver();
    // the receiver is down at first: deliveries stay pending, retried, when the backup is taken
    receiver.answer = () => 503;
    first = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
    await pairedSession(first, 'a', A);
    await pairedSession(first, 'b', B);
    const hook = await first.request('POST', '/api/webhooks', {
      url: `${receiver.base}/hook`,
      hmacKey: HMAC_KEY,
      events: ['message.sent'],
      retries: { attempts: 20, delaySeconds: 1, policy: 'constant' },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
  });
  after(async () => {
    await second?.cleanup();
    await first?.cleanup();
    await receiver?.close();
    rmSync(work, { recursive: true, force: true });
  });

  test('the backup is taken while sends go on; every send is in the copy whole or not at all', async () => {
    for (let i = 0; i < 10; i++) {
      const sent = await first.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: `before ${i}` });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      before_.push(sent.body.data.messageId);
    }
    let sending = true;
    let during = 0;
    const load = Array.from({ length: 4 }, async (_, lane) => {
      while (sending) {
        const sent = await first.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: `load ${lane}` });
        assert.equal(sent.status, 200, JSON.stringify(sent.body));
        during += 1;
      }
    });
    await new Promise((r) => setTimeout(r, 100));
    const run = await runCli(['backup', copy], { cwd: work, env: daemonEnv(first) });
    sending = false;
    await Promise.all(load);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^backup written: .*copy\.db \([\d.]+ [KM]?B, schema version \d+, \d+ ms\)$/m);
    assert.ok(during > 0, 'sends ran during the backup');
    assert.equal(statSync(copy).mode & 0o777, 0o600);
    // the daemon's own copy in <dataDir>/backups, 0600 too, listed by the API
    const listed = await first.request('GET', '/api/admin/backups');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.length, 1);
    assert.equal(statSync(listed.body.data[0].path).mode & 0o777, 0o600);
    assert.deepEqual(readFileSync(listed.body.data[0].path), readFileSync(copy));

    const { messages, deliveries } = sendsIn(copy);
    for (const id of before_) assert.ok(messages.has(id), `message ${id} sent before the backup is in it`);
    assert.deepEqual([...messages].sort(), [...deliveries].sort(), 'each send in the copy has both its message row and its delivery');
    await first.kill();
  });

  test('restore refuses a file that is not a sound gateway database, or sealed under another key; nothing changes', async () => {
    const port = await freePort();
    const env = { GATEWAY_DATA_DIR: restoredDir, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_PORT: String(port), GATEWAY_URL: `http://127.0.0.1:${port}` };
    const corrupt = join(work, 'corrupt.db');
    const bytes = readFileSync(copy);
    // scribble over the middle of the file: the pages of some table or index
    bytes.fill(0x5a, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 8192);
    writeFileSync(corrupt, bytes);
    const bad = await runCli(['restore', corrupt], { cwd: work, env });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /failed the integrity check .*nothing was changed/);

    const text = join(work, 'notes.db');
    writeFileSync(text, 'not a database at all, just text that is long enough to look like a file header'.repeat(10));
    const notDb = await runCli(['restore', text], { cwd: work, env });
    assert.notEqual(notDb.code, 0);
    assert.match(notDb.stderr, /integrity check|not a gateway database/);

    const wrongKey = await runCli(['restore', copy], { cwd: work, env: { ...env, GATEWAY_MASTER_KEY: 'svc_master_some_other_key_0123456789abcdef' } });
    assert.equal(wrongKey.code, 4, wrongKey.stderr);
    assert.match(wrongKey.stderr, /sealed under data key .* nothing was changed/);

    const future = join(work, 'future.db');
    writeFileSync(future, readFileSync(copy));
    const db = new Database(future);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST_SCHEMA_VERSION + 1, 'from-the-future', new Date().toISOString());
    db.close();
    const newer = await runCli(['restore', future], { cwd: work, env });
    assert.equal(newer.code, 1, newer.stderr);
    assert.match(newer.stderr, new RegExp(`schema version ${LATEST_SCHEMA_VERSION + 1}, newer than this build knows \\(${LATEST_SCHEMA_VERSION}\\)`));

    assert.ok(!existsSync(join(restoredDir, 'gateway.db')), 'no refused restore wrote a database');
  });

  test('restored: sessions CONNECTED without pairing, every event recorded before the backup delivered, signed', async () => {
    const port = await freePort();
    const env = { GATEWAY_DATA_DIR: restoredDir, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_PORT: String(port), GATEWAY_URL: `http://127.0.0.1:${port}` };
    const run = await runCli(['restore', copy], { cwd: work, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^restored .*copy\.db into .*restored\/gateway\.db$/m);
    assert.equal(statSync(join(restoredDir, 'gateway.db')).mode & 0o777, 0o600);
    const inCopy = sendsIn(copy).deliveries;

    const ownDeliveriesBefore = receiver.on('/hook').filter((d) => d.status === 200).length;
    assert.equal(ownDeliveriesBefore, 0, 'nothing was acknowledged before the restore');
    receiver.answer = () => 200;
    second = await startDaemon({ dataDir: restoredDir, port, env: { GATEWAY_LOG_LEVEL: 'warn' } });
    for (const [name, phone] of [['a', A], ['b', B]] as const) {
      const session: any = await waitFor(async () => {
        const s = (await second!.request('GET', `/api/sessions/${name}`)).body.data;
        return s.status === 'CONNECTED' ? s : null;
      }, 15_000, `${name} CONNECTED after the restore`);
      assert.equal(session.phoneNumber, phone);
    }
    await waitFor(() => {
      const acknowledged = new Set(receiver.on('/hook').filter((d) => d.status === 200).map((d) => d.json.payload.messageId as string));
      return [...inCopy].every((id) => acknowledged.has(id));
    }, 30_000, 'every delivery in the copy to be acknowledged');
    for (const delivery of receiver.on('/hook').filter((d) => d.status === 200)) {
      assert.equal(delivery.headers['x-webhook-signature'], hmacHex(HMAC_KEY, delivery.raw));
    }
    for (const id of before_) assert.ok(inCopy.has(id));

    // the restore, done while no daemon ran, is in the restored daemon's audit log
    const audit = (await second.request('GET', '/api/admin/audit?action=backup.restore')).body.data;
    assert.equal(audit.length, 1, JSON.stringify(audit));
    assert.equal(audit[0].target, 'copy.db');
    assert.deepEqual(audit[0].actor, { kind: 'system', name: 'gateway restore' });
    assert.ok(!existsSync(join(restoredDir, 'restored.json')), 'the note is removed once recorded');

    // and the restored sessions work: a new send goes out and is delivered
    const sent = await second.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'after the restore' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    await waitFor(() => receiver.on('/hook').some((d) => d.json.payload.messageId === sent.body.data.messageId), 10_000, 'the new send delivered');
  });

  test('restore refuses a running daemon; on a stopped one it keeps the replaced database (with its -wal) aside', async () => {
    const env = { GATEWAY_DATA_DIR: restoredDir, GATEWAY_MASTER_KEY: MASTER_KEY, GATEWAY_PORT: new URL(second!.url).port, GATEWAY_URL: second!.url };
    const refused = await runCli(['restore', copy], { cwd: work, env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /a gateway daemon answers at http:\/\/127\.0\.0\.1:\d+: stop it first/);
    // found through the database lock alone, when the daemon is not at the address the CLI looks at
    const idle = await freePort();
    const byLock = await runCli(['restore', copy], { cwd: work, env: { ...env, GATEWAY_PORT: String(idle), GATEWAY_URL: `http://127.0.0.1:${idle}` } });
    assert.equal(byLock.code, 1);
    assert.match(byLock.stderr, /gateway\.db is open in another process .*stop it first/);

    await second!.kill();
    const afterSend = new Set(sendsIn(join(restoredDir, 'gateway.db')).messages);
    const run = await runCli(['--json', 'restore', copy], { cwd: work, env });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.match(result.replaced, /gateway\.db\.replaced-\d{8}T\d{9}Z$/);
    assert.ok(readdirSync(restoredDir).some((name) => name.startsWith('gateway.db.replaced-')));
    // the kept database is whole: it has the send made after the restore (from its -wal, kept beside it)
    const kept = sendsIn(result.replaced).messages;
    assert.deepEqual([...kept].sort(), [...afterSend].sort());
    assert.equal(sendsIn(join(restoredDir, 'gateway.db')).messages.size, sendsIn(copy).messages.size);
  });
});
