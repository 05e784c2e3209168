// `gateway settings s3 …` and `gateway settings show` (the built binary) against a real daemon: flags set the
// run-time settings, the secret is never printed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliFor } from '../helpers/cli.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

const gateway = cliFor(() => daemon);
const SECRET = 'cli-secret-5e1d8b2f-DO-NOT-PRINT';

async function settings(): Promise<any> {
  const res = await daemon.request('GET', '/api/admin/settings');
  assert.equal(res.status, 200);
  return res.body.data;
}

describe('gateway settings', () => {
  test('s3 flags set every S3 field and auto-persist; the output never holds the secret', async () => {
    const set = await gateway(
      'settings', 's3',
      '--endpoint', 'http://127.0.0.1:9000',
      '--region', 'eu-central-1',
      '--bucket', 'gw-media',
      '--access-key', 'AKIDCLITEST',
      '--secret', SECRET,
      '--path-style',
      '--prefix', 'tenant-a',
      '--presign-seconds', '600',
      '--auto-persist',
      '--json',
    );
    assert.equal(set.code, 0, set.stderr);
    assert.ok(!set.stdout.includes(SECRET) && !set.stderr.includes(SECRET), set.stdout);
    assert.deepEqual(await settings(), {
      s3: {
        endpoint: 'http://127.0.0.1:9000',
        region: 'eu-central-1',
        bucket: 'gw-media',
        accessKeyId: 'AKIDCLITEST',
        forcePathStyle: true,
        keyPrefix: 'tenant-a',
        presignExpiresSeconds: 600,
        secretAccessKeySet: true,
      },
      autoPersist: true,
    });
    // what the command printed is the daemon's view of the new settings
    assert.equal(JSON.parse(set.stdout).s3.bucket, 'gw-media');

    // for people by default: a listing, not JSON
    const listed = await gateway('settings', 'show');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(!listed.stdout.includes(SECRET), listed.stdout);
    assert.throws(() => JSON.parse(listed.stdout));
    assert.match(listed.stdout, /^S3 storage:\n/);
    assert.match(listed.stdout, /^ {2}bucket +gw-media$/m);
    assert.match(listed.stdout, /^ {2}access key id +AKIDCLITEST$/m);
    assert.match(listed.stdout, /^ {2}secret access key +\(set\)$/m);
    assert.match(listed.stdout, /^ {2}addressing +path-style$/m);
    assert.match(listed.stdout, /^ {2}media URLs +presigned, valid 600 s$/m);
    assert.match(listed.stdout, /^auto-persist: on/m);

    const show = await gateway('settings', 'show', '--json');
    assert.equal(show.code, 0, show.stderr);
    assert.ok(!show.stdout.includes(SECRET), show.stdout);
    const shown = JSON.parse(show.stdout);
    assert.equal(shown.s3.accessKeyId, 'AKIDCLITEST');
    assert.equal(shown.s3.secretAccessKeySet, true);
    assert.equal('secretAccessKey' in shown.s3, false);
  });

  test('fields not given keep their value (the secret too); --public-url; --no-auto-persist', async () => {
    const changed = await gateway('settings', 's3', '--bucket', 'other-bucket', '--public-url', 'https://cdn.example.com/media', '--no-auto-persist');
    assert.equal(changed.code, 0, changed.stderr);
    const now = await settings();
    assert.equal(now.s3.bucket, 'other-bucket');
    assert.equal(now.s3.publicBaseUrl, 'https://cdn.example.com/media');
    assert.equal(now.s3.accessKeyId, 'AKIDCLITEST');
    assert.equal(now.s3.region, 'eu-central-1');
    assert.equal(now.s3.secretAccessKeySet, true);
    assert.equal(now.autoPersist, false);
    const show = await gateway('settings', 'show');
    assert.ok(!show.stdout.includes(SECRET), show.stdout);
  });

  test('invalid values are refused by the daemon and change nothing', async () => {
    const before = await settings();
    const bad = await gateway('settings', 's3', '--bucket', 'Not_A_Bucket');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /VALIDATION_FAILED: s3\.bucket must match/, 'the message names the field, not the other branch of s3');
    const direct = await daemon.request('PUT', '/api/admin/settings', { s3: { endpoint: 'http://127.0.0.1:1', region: 'us-east-1', bucket: 'Not_A_Bucket', accessKeyId: 'a', secretAccessKey: 'b' } });
    assert.equal(direct.status, 400);
    assert.deepEqual(direct.body.error.details.map((d: { path: string }) => d.path), ['/s3/bucket']);
    const badSeconds = await gateway('settings', 's3', '--presign-seconds', 'soon');
    assert.notEqual(badSeconds.code, 0);
    assert.match(badSeconds.stderr, /VALIDATION_FAILED/);
    assert.deepEqual(await settings(), before);
  });

  test('--remove clears the S3 settings and turns auto-persist off', async () => {
    assert.equal((await gateway('settings', 's3', '--auto-persist')).code, 0);
    assert.equal((await settings()).autoPersist, true);
    const removed = await gateway('settings', 's3', '--remove');
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(await settings(), { s3: null, autoPersist: false });
    const show = await gateway('settings', 'show', '--json');
    assert.equal(show.code, 0);
    assert.deepEqual(JSON.parse(show.stdout), { s3: null, autoPersist: false });
    const listed = await gateway('settings', 'show');
    assert.equal(listed.stdout, 'S3 storage: not configured (`gateway settings s3 --help` to set it)\nauto-persist: off\n');
  });
});
