// Secrets at rest, end to end: a copied gateway.db (with its -wal/-shm) holds no credential in plaintext, and the
// plaintext rows of an older database are sealed on start without re-pairing any session.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { checkSealedKey } from '../../src/store/sealed-columns.js';
import { isSealed, secretBoxFor } from '../../src/auth/secret-box.js';
import { openDatabase } from '../../src/store/db.js';
import { MASTER_KEY, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { copyDbFiles, hmacHex, leaks, readDb, storedValue, unsealAll } from '../helpers/secrets.js';
import { join } from 'node:path';

const A = '+15550300001';
const B = '+15550300002';
const HMAC_SECRET = 'whsec-known-hmac-4f1c2a9e7b';
const HEADER_SECRET = 'receiver-token-known-8d3e55a1';
const S3_SECRET = 's3-secret-known-2b7f09c4d6e1';
const PROXY_PASSWORD = 'proxy-pass-known-71c0e2';

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
after(() => receiver.close());

/** Everything that stores a secret: paired sessions, a webhook with a key and a custom header, S3 settings, a proxy URL, a client token. */
async function populate(daemon: TestDaemon, hookPath: string): Promise<void> {
  await pairedSession(daemon, 'a', A);
  await pairedSession(daemon, 'b', B);
  const hook = await daemon.request('POST', '/api/webhooks', {
    url: `${receiver.base}${hookPath}`,
    hmacKey: HMAC_SECRET,
    headers: [{ name: 'X-Receiver-Token', value: HEADER_SECRET }],
  });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const s3 = await daemon.request('PUT', '/api/admin/settings', {
    s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', bucket: 'media', accessKeyId: 'AKIAEXAMPLEKNOWN', secretAccessKey: S3_SECRET, forcePathStyle: true },
  });
  assert.equal(s3.status, 200, JSON.stringify(s3.body));
  const proxied = await daemon.request('POST', '/api/sessions', { name: 'p', engine: 'sandbox', proxy: `http://user:${PROXY_PASSWORD}@8.8.8.8:3128` });
  assert.equal(proxied.status, 201, JSON.stringify(proxied.body));
  const rules = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_message' });
  assert.equal(rules.status, 200, JSON.stringify(rules.body));
  const token = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor' });
  assert.equal(token.status, 201, JSON.stringify(token.body));
  const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'hello at rest' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  await receiver.waitForCount(1, hookPath);
}

/** The secrets a copied database must not reveal, with the credentials the daemon stored read back through the key. */
async function knownSecrets(dataDir: string): Promise<Record<string, string>> {
  const credsA = await storedValue(dataDir, 'auth_state', 'value', "session = 'a' AND key = 'creds'");
  const credsB = await storedValue(dataDir, 'auth_state', 'value', "session = 'b' AND key = 'creds'");
  const signing = await storedValue(dataDir, 'settings', 'value', "key = 'clientTokens.signingSecret'");
  assert.ok(credsA && credsB && signing, 'the daemon stored session credentials and a client-token signing secret');
  return {
    hmacKey: HMAC_SECRET,
    webhookHeader: HEADER_SECRET,
    s3Secret: S3_SECRET,
    proxyPassword: PROXY_PASSWORD,
    credsA,
    credsB,
    clientTokenSigningSecret: JSON.parse(signing) as string,
  };
}

describe('a copied database without the key', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon();
    await populate(daemon, '/copied');
  });
  after(() => daemon.cleanup());

  test('holds no secret in plaintext, while the daemon runs (db, -wal, -shm) and after it stopped', async () => {
    const secrets = await knownSecrets(daemon.dataDir);
    assert.deepEqual(leaks(copyDbFiles(daemon.dataDir), secrets), [], 'secrets found in a copy of the running daemon\'s files');
    assert.equal(await daemon.stop(), 0);
    const files = copyDbFiles(daemon.dataDir);
    assert.ok(files.get('gateway.db')!.length > 0);
    assert.deepEqual(leaks(files, secrets), [], 'secrets found in the stopped daemon\'s files');
    // every sealed column holds sealed values only, none openable with another master key
    await readDb(daemon.dataDir, async (db) => {
      for (const [table, column] of [['auth_state', 'value'], ['webhooks', 'hmac_key'], ['webhooks', 'headers'], ['settings', 'value'], ['sessions', 'proxy']] as const) {
        const values = await db.prepare<string>(`SELECT ${column} FROM ${table} WHERE ${column} IS NOT NULL`).pluck().all();
        assert.ok(values.length > 0, `${table}.${column} has rows`);
        assert.ok(values.every(isSealed), `${table}.${column} holds only sealed values`);
      }
    });
  });
});

describe('an older database with plaintext secrets', () => {
  let daemon: TestDaemon;
  let dataDir: string;
  before(async () => {
    daemon = await startDaemon();
    dataDir = daemon.dataDir;
    await populate(daemon, '/old');
    assert.equal(await daemon.stop(), 0);
  });
  after(async () => {
    await daemon.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('is sealed on start, once, and its sessions come back CONNECTED without pairing', async () => {
    const secrets = await knownSecrets(dataDir);
    // the rows as the version before encryption wrote them
    assert.ok((await unsealAll(dataDir)) >= 6);
    assert.notDeepEqual(leaks(copyDbFiles(dataDir), secrets), [], 'the old database holds the secrets in plaintext');

    const before = receiver.on('/old').length;
    daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'info' } });
    for (const name of ['a', 'b']) {
      await waitFor(async () => (await daemon.request('GET', `/api/sessions/${name}`)).body.data.status === 'CONNECTED', 5000, `${name} CONNECTED`);
    }
    const sealedLines = daemon.output().split('\n').filter((line) => line.includes('sealed the secrets an earlier version stored in plaintext'));
    assert.equal(sealedLines.length, 1, daemon.output());
    assert.ok(!secrets.hmacKey || !sealedLines[0]!.includes(HMAC_SECRET));

    // the webhook still signs with its key, and still sends its custom header
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'after the migration' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const deliveries = await receiver.waitForCount(before + 1, '/old');
    const last = deliveries[deliveries.length - 1]!;
    assert.equal(last.headers['x-webhook-signature'], hmacHex(HMAC_SECRET, last.raw));
    assert.equal(last.headers['x-receiver-token'], HEADER_SECRET);
    const settings = await daemon.request('GET', '/api/admin/settings');
    assert.equal(settings.body.data.s3.secretAccessKeySet, true);
    assert.equal((await daemon.request('GET', '/api/sessions/p')).body.data.proxy, 'http://user:***@8.8.8.8:3128');

    // nothing of the plaintext survives in the file (rewritten rows leave their old bytes in free pages otherwise)
    assert.equal(await daemon.stop(), 0);
    assert.deepEqual(leaks(copyDbFiles(dataDir), secrets), []);

    // idempotent: the next start finds nothing to seal
    daemon = await startDaemon({ dataDir });
    await waitFor(async () => (await daemon.request('GET', '/api/sessions/a')).body.data.status === 'CONNECTED', 5000, 'a CONNECTED');
    assert.ok(!daemon.output().includes('sealed the secrets'), daemon.output());
    assert.equal(await daemon.stop(), 0);
  });

  test('a daemon given another master key refuses to start, naming the cause, and leaves the database alone', async () => {
    const bytes = copyDbFiles(dataDir).get('gateway.db')!;
    await assert.rejects(
      startDaemon({ dataDir, env: { GATEWAY_MASTER_KEY: 'svc_master_another_key_0123456789abcdef' } }),
      /sealed under data key [0-9a-f]{8}, not under this one.*rotate-master-key/s,
    );
    assert.ok(copyDbFiles(dataDir).get('gateway.db')!.equals(bytes), 'the database was changed');
    const db = openDatabase(join(dataDir, 'gateway.db'));
    try {
      assert.equal(await checkSealedKey(db, secretBoxFor({ masterKey: MASTER_KEY })), undefined);
    } finally {
      await db.close();
    }
  });
});

test('a malformed GATEWAY_ENCRYPTION_KEY stops the daemon before it opens anything', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bad-encryption-key-'));
  try {
    await assert.rejects(startDaemon({ dataDir, env: { GATEWAY_ENCRYPTION_KEY: 'not-32-bytes' } }), /exited with 4.*auth\.encryptionKey/s);
    assert.ok(!existsSync(join(dataDir, 'gateway.db')));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
