// Backups the daemon takes by itself (backup.schedule, backup.keep), and a backup with the media blobs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pairedSession, startDaemon, waitFor } from '../helpers/daemon.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

test('backup.schedule takes backups by itself and keeps the newest backup.keep, each 0600', async () => {
  const daemon = await startDaemon({ config: 'backup:\n  schedule: 1s\n  keep: 2\n', env: { GATEWAY_LOG_LEVEL: 'info' } });
  try {
    await waitFor(() => (daemon.output().match(/"msg":"scheduled backup written"/g) ?? []).length >= 4, 30_000, 'four scheduled backups');
    const listed = (await daemon.request('GET', '/api/admin/backups')).body.data as Array<{ name: string; path: string; createdAt: string }>;
    assert.ok(listed.length >= 2 && listed.length <= 3, `kept ${listed.length}`); // a third may be being written right now
    assert.ok(listed[0]!.createdAt > listed[1]!.createdAt, 'newest first');
    for (const backup of listed) assert.equal(statSync(backup.path).mode & 0o777, 0o600);
    const files = readdirSync(join(daemon.dataDir, 'backups')).filter((name) => name.endsWith('.db'));
    assert.ok(files.length <= 3, files.join(', '));
  } finally {
    await daemon.cleanup();
  }
});

test('a backup with media copies the blobs beside it; an unknown backup name is a 404', async () => {
  const daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  try {
    await pairedSession(daemon, 'a', '+15550440001');
    await pairedSession(daemon, 'b', '+15550440002');
    const sent = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: '+15550440002', type: 'image', base64: PNG.toString('base64') });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const blobs = await waitFor(() => {
      const names = readdirSync(join(daemon.dataDir, 'media'));
      return names.length ? names : null;
    }, 10_000, 'a media blob');
    const backup = await daemon.request('POST', '/api/admin/backups', { withMedia: true });
    assert.equal(backup.status, 201, JSON.stringify(backup.body));
    const media = backup.body.data.media;
    assert.equal(media.files, blobs.length);
    for (const name of blobs) assert.ok(readFileSync(join(media.path, name)).equals(readFileSync(join(daemon.dataDir, 'media', name))));
    assert.equal(backup.body.data.schemaVersion > 0, true);

    const download = await fetch(`${daemon.url}/api/admin/backups/${backup.body.data.name}`, { headers: { Authorization: `Bearer ${daemon.masterKey}` } });
    assert.equal(download.status, 200);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(readFileSync(backup.body.data.path)));
    const missing = await daemon.request('GET', '/api/admin/backups/gateway-20000101T000000000Z.db');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'BACKUP_NOT_FOUND');
    const traversal = await daemon.request('GET', '/api/admin/backups/..%2Fgateway.db');
    assert.equal(traversal.status, 400);
    // master key only
    const key = await daemon.request('POST', '/api/admin/keys', { name: 'all', scopes: ['*'] });
    assert.equal((await daemon.request('POST', '/api/admin/backups', {}, key.body.data.key)).status, 403);
    assert.equal((await daemon.request('GET', '/api/admin/status', undefined, key.body.data.key)).status, 403);
  } finally {
    await daemon.cleanup();
  }
});
