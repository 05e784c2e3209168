// The Baileys credentials and Signal keys, against the WhatsApp Web emulator: a copied gateway.db holds none of the
// account's private keys, and a trace-level log of pairing and messaging prints none of them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BufferJSON } from '@whiskeysockets/baileys';
import { copyDbFiles, leaks, readDb, storedValue } from '../helpers/secrets.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const A = '+15550600001';
const B = '+15550600002';

/** the private key material of session `name`: creds' key pairs, the adv secret, and one pre-key */
async function privateKeys(dataDir: string, name: string): Promise<Record<string, Buffer>> {
  const raw = await storedValue(dataDir, 'auth_state', 'value', `session = '${name}' AND key = 'baileys:creds'`);
  assert.ok(raw, `${name} has stored creds`);
  const creds = JSON.parse(raw, BufferJSON.reviver);
  const preKeyName = (await readDb(dataDir, (db) => db.prepare("SELECT key FROM auth_state WHERE session = ? AND key LIKE 'baileys:pre-key:%' LIMIT 1").pluck().get(name))) as string;
  const preKey = JSON.parse((await storedValue(dataDir, 'auth_state', 'value', `session = '${name}' AND key = '${preKeyName}'`))!, BufferJSON.reviver);
  return {
    [`${name} noiseKey`]: Buffer.from(creds.noiseKey.private),
    [`${name} signedIdentityKey`]: Buffer.from(creds.signedIdentityKey.private),
    [`${name} signedPreKey`]: Buffer.from(creds.signedPreKey.keyPair.private),
    [`${name} advSecretKey`]: Buffer.from(creds.advSecretKey, 'base64'),
    [`${name} ${preKeyName}`]: Buffer.from(preKey.private),
  };
}

/** a key as raw bytes, and as the text forms a JSON value or a log line would carry it */
function forms(keys: Record<string, Buffer>): Record<string, string | Buffer> {
  const out: Record<string, string | Buffer> = {};
  for (const [name, key] of Object.entries(keys)) {
    assert.equal(key.length, 32, `${name} is a 32-byte key`);
    out[`${name} (bytes)`] = key;
    out[`${name} (base64)`] = key.toString('base64');
    out[`${name} (hex)`] = key.toString('hex');
    out[`${name} (JSON array)`] = JSON.stringify([...key]).slice(1, -1);
  }
  return out;
}

describe('Baileys credentials at rest and in the log', () => {
  let target: BaileysTarget;
  before(async () => {
    target = await startBaileysTarget({ env: { GATEWAY_LOG_LEVEL: 'trace' } });
    // a webhook for the pairing QR (which carries the adv secret): its deliveries, undeliverable here, stay in the outbox
    const hook = await target.daemon.request('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/qr', events: ['session.qr'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    await target.pairedSession('a', A);
    await target.pairedSession('b', B);
  });
  after(() => target.close());

  test('neither a copied database nor the trace log holds an account\'s private keys', async () => {
    const daemon = target.daemon;
    for (const [from, to] of [['a', B], ['b', A]] as const) {
      const sent = await daemon.request('POST', '/api/messages/send', { session: from, chatId: to, type: 'text', text: `secret-free ${from}` });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
    }
    const secrets = forms({ ...(await privateKeys(target.dataDir, 'a')), ...(await privateKeys(target.dataDir, 'b')) });
    assert.deepEqual(leaks(copyDbFiles(target.dataDir), secrets), [], 'private keys in a copy of the running daemon\'s files');
    await daemon.stop();
    assert.deepEqual(leaks(copyDbFiles(target.dataDir), secrets), [], 'private keys in the stopped daemon\'s files');
    const output = Buffer.from(daemon.output());
    assert.ok(output.toString().split('\n').length > 50, 'the daemon logged at trace level');
    assert.deepEqual(leaks(new Map([['the log', output]]), secrets), [], 'private keys in the daemon\'s log');
  });
});
