// No log line carries a key, token, secret or credential: a full scenario at GATEWAY_LOG_LEVEL=trace (master key, API
// key, client token, webhook key and custom header, S3 secret, proxy password, paired sessions, messages sent, bad
// credentials tried), then the daemon's whole output is searched for every secret it was given or created.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dataKeyFrom, generateEncryptionKey } from '../../src/auth/secret-box.js';
import { MASTER_KEY, pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { storedValue } from '../helpers/secrets.js';

const A = '+15550500001';
const B = '+15550500002';
const HMAC_SECRET = 'whsec-logged-never-93b1f0';
const HEADER_SECRET = 'receiver-token-logged-never-4c2d';
const S3_SECRET = 's3-secret-logged-never-7e6f';
const PROXY_PASSWORD = 'proxy-pass-logged-never-11aa';

/** every form a secret could take in a log line */
const forms = (name: string, secret: string): Array<[string, string]> => [
  [name, secret],
  [`${name} (JSON-escaped)`, JSON.stringify(secret).slice(1, -1)],
  [`${name} (URL-encoded)`, encodeURIComponent(secret)],
];

function assertNotLogged(output: string, secrets: Record<string, string>): void {
  const found = Object.entries(secrets)
    .flatMap(([name, secret]) => forms(name, secret))
    .filter(([, form]) => output.includes(form))
    .map(([name]) => name);
  assert.deepEqual(found, [], 'secrets found in the daemon\'s log');
}

for (const scenario of [
  { name: 'data key derived from the master key', env: {} as Record<string, string> },
  { name: 'data key from GATEWAY_ENCRYPTION_KEY', env: { GATEWAY_ENCRYPTION_KEY: generateEncryptionKey() } },
]) {
  describe(`log lines at trace level, ${scenario.name}`, () => {
    let receiver: Receiver;
    let daemon: TestDaemon;
    before(async () => {
      receiver = await startReceiver();
      daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'trace', ...scenario.env } });
    });
    after(async () => {
      await daemon.cleanup();
      await receiver.close();
    });

    test('carry none of the secrets the run created', async () => {
      await pairedSession(daemon, 'a', A);
      await pairedSession(daemon, 'b', B);
      const created = await daemon.request('POST', '/api/account/keys', { name: 'app', scopes: ['*'] });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const apiKey = created.body.data.key as string;
      assert.equal((await daemon.request('GET', '/api/sessions', undefined, apiKey)).status, 200);
      // wrong credentials that look like real ones are not echoed either
      const wrongKey = `${apiKey.slice(0, -6)}zzzzzz`;
      assert.equal((await daemon.request('GET', '/api/sessions', undefined, wrongKey)).status, 401);

      const hook = await daemon.request('POST', '/api/webhooks', {
        url: `${receiver.base}/log`,
        hmacKey: HMAC_SECRET,
        headers: [{ name: 'X-Receiver-Token', value: HEADER_SECRET }],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      const generated = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/generated` });
      assert.equal(generated.status, 201, JSON.stringify(generated.body));
      const generatedKey = generated.body.data.hmacKey as string;

      const s3 = await daemon.request('PUT', '/api/admin/settings', { s3: { bucket: 'media', accessKeyId: 'AKIALOGTEST', secretAccessKey: S3_SECRET } });
      assert.equal(s3.status, 200, JSON.stringify(s3.body));
      const proxied = await daemon.request('POST', '/api/sessions', { name: 'p', engine: 'sandbox', proxy: `socks5://user:${PROXY_PASSWORD}@8.8.4.4:1080` });
      assert.equal(proxied.status, 201, JSON.stringify(proxied.body));

      const rules = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'send_message' });
      assert.equal(rules.status, 200, JSON.stringify(rules.body));
      const minted = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor' });
      assert.equal(minted.status, 201, JSON.stringify(minted.body));
      const clientToken = minted.body.data.token as string;
      const asClient = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'from the browser' }, clientToken);
      assert.equal(asClient.status, 200, JSON.stringify(asClient.body));
      const forged = `${clientToken.slice(0, -4)}AAAA`;
      assert.equal((await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'x' }, forged)).status, 401);

      const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'hello' }, apiKey);
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      await receiver.waitForCount(1, '/log');
      await receiver.waitForCount(1, '/generated');

      const auth = { masterKey: MASTER_KEY, encryptionKey: scenario.env.GATEWAY_ENCRYPTION_KEY };
      const signing = await storedValue(daemon.dataDir, 'settings', 'value', "key = 'clientTokens.signingSecret'", auth);
      const creds = await storedValue(daemon.dataDir, 'auth_state', 'value', "session = 'a' AND key = 'creds'", auth);
      assert.ok(signing && creds);
      assert.equal(await daemon.stop(), 0);

      const output = daemon.output();
      assert.match(output, /gateway listening/, 'the daemon\'s output was captured');
      const dataKey = dataKeyFrom({ masterKey: MASTER_KEY, encryptionKey: scenario.env.GATEWAY_ENCRYPTION_KEY });
      assertNotLogged(output, {
        masterKey: MASTER_KEY,
        apiKey,
        wrongKey,
        clientToken,
        clientTokenJwt: clientToken.slice('svc_ct_'.length),
        forgedToken: forged,
        hmacKey: HMAC_SECRET,
        generatedHmacKey: generatedKey,
        webhookHeader: HEADER_SECRET,
        s3Secret: S3_SECRET,
        proxyPassword: PROXY_PASSWORD,
        clientTokenSigningSecret: JSON.parse(signing) as string,
        sessionCreds: creds,
        dataKeyHex: dataKey.toString('hex'),
        dataKeyBase64: dataKey.toString('base64'),
        dataKeyBase64url: dataKey.toString('base64url'),
        ...(scenario.env.GATEWAY_ENCRYPTION_KEY ? { encryptionKey: scenario.env.GATEWAY_ENCRYPTION_KEY } : {}),
      });
    });
  });
}
