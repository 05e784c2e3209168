// The logger's safety net: secret-bearing fields are censored wherever a logged object carries them.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/logger.js';

test('secret fields are censored at the top level, one level down, in headers and child bindings', () => {
  let out = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      done();
    },
  });
  const logger = createLogger('trace', sink);
  logger.info({ masterKey: 'svc_master_leak_1', webhook: { url: 'https://x', hmacKey: 'hmac-leak-2' } }, 'one');
  logger.debug({ s3: { bucket: 'b', secretAccessKey: 's3-leak-3' }, req: { headers: { authorization: 'Bearer leak-4' } } }, 'two');
  logger.child({ module: 'x' }).warn({ session: { creds: { noiseKey: 'leak-5' } }, token: 'svc_ct_leak-6', password: 'leak-7' }, 'three');
  logger.trace({ headers: { authorization: 'Bearer leak-8' }, encryptionKey: 'leak-9' }, 'four');
  const lines = out.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(lines.length, 4);
  for (const leak of ['leak_1', 'leak-2', 'leak-3', 'leak-4', 'leak-5', 'leak-6', 'leak-7', 'leak-8', 'leak-9']) assert.ok(!out.includes(leak), `${leak} logged`);
  assert.equal(lines[0].webhook.url, 'https://x', 'other fields are kept');
  assert.equal(lines[1].s3.bucket, 'b');
  assert.equal(lines[0].masterKey, '[redacted]');
});
