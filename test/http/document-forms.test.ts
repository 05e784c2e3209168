// Issue 28, "the document": the forms it documents work, the old ones keep working, and the lists it pages page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { standaloneDocument } from '../../src/http/document.js';
import { pairedSession, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { onPostgres } from '../helpers/daemon-db.js';

const A = '+15550700001';
const B = '+15550700002';

describe('documented forms and their old spellings', () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startDaemon();
    await pairedSession(daemon, 'a', A);
    await pairedSession(daemon, 'b', B);
  });
  after(() => daemon?.cleanup());

  test('send takes the session in the path; the old body form still works and is documented deprecated', async () => {
    const byPath = await daemon.request('POST', '/api/sessions/a/messages/send', { chatId: B, type: 'text', text: 'path form' });
    assert.equal(byPath.status, 200, JSON.stringify(byPath.body));
    assert.match(byPath.body.data.messageId, /\S/);
    const same = await daemon.request('POST', '/api/sessions/a/messages/send', { session: 'a', chatId: B, type: 'text', text: 'path form, session repeated' });
    assert.equal(same.status, 200);
    const other = await daemon.request('POST', '/api/sessions/a/messages/send', { session: 'b', chatId: B, type: 'text', text: 'mismatch' });
    assert.equal(other.status, 400);
    assert.equal(other.body.error.details[0].path, '/session');
    const byBody = await daemon.request('POST', '/api/messages/send', { session: 'a', chatId: B, type: 'text', text: 'body form' });
    assert.equal(byBody.status, 200, JSON.stringify(byBody.body));

    const doc = standaloneDocument();
    const send = doc.paths['/api/sessions/{session}/messages/send']!.post as unknown as { operationId: string; deprecated?: boolean };
    const old = doc.paths['/api/messages/send']!.post as unknown as { operationId: string; deprecated?: boolean };
    assert.equal(send.operationId, 'sendMessage');
    assert.equal(send.deprecated, undefined);
    assert.equal(old.deprecated, true);
  });

  test('content rules answer as before through the schema: the field at fault, a sentence naming the type', async () => {
    const text = await daemon.request('POST', '/api/sessions/a/messages/send', { chatId: B, type: 'text', text: 'x', address: 'here' });
    assert.equal(text.status, 400);
    assert.deepEqual(text.body.error.details, [{ path: '/address', message: 'is not used by text messages' }]);
    const none = await daemon.request('POST', '/api/sessions/a/messages/send', { chatId: B, type: 'image' });
    assert.deepEqual(none.body.error.details, [{ path: '/url', message: 'exactly one of url or base64 is required' }]);
    const both = await daemon.request('POST', '/api/sessions/a/messages/send', { chatId: B, type: 'file', url: 'https://example.com/a', base64: 'aGVsbG8=', filename: 'a.txt' });
    assert.deepEqual(both.body.error.details, [{ path: '/base64', message: 'exactly one of url or base64 is required' }]);
  });

  test('a channel answers channelId, the same value as lid', async () => {
    const created = await daemon.request('POST', '/api/sessions/a/channels', { session: 'a', name: 'News' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.data.channelId, /@newsletter$/);
    assert.equal(created.body.data.lid, created.body.data.channelId);
    const read = await daemon.request('GET', `/api/sessions/a/channels/${encodeURIComponent(created.body.data.channelId)}`);
    assert.equal(read.body.data.channelId, created.body.data.channelId);
  });

  test('admin keys, account keys and backups page with limit and offset and count with X-Total-Count', async () => {
    for (const name of ['k1', 'k2', 'k3']) assert.equal((await daemon.request('POST', '/api/admin/keys', { name, scopes: ['*'] })).status, 201);
    const all = await daemon.request('GET', '/api/admin/keys');
    assert.equal(all.headers.get('x-total-count'), String(all.body.data.length));
    const page = await daemon.request('GET', '/api/admin/keys?limit=1&offset=1');
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.data.map((k: { id: string }) => k.id), [all.body.data[1].id]);
    assert.equal(page.headers.get('x-total-count'), String(all.body.data.length));

    const owner = (await daemon.request('POST', '/api/admin/keys', { name: 'owner', scopes: ['keys:manage', 'sessions:read'] })).body.data.key;
    for (const name of ['c1', 'c2']) assert.equal((await daemon.request('POST', '/api/account/keys', { name, scopes: ['sessions:read'] }, owner)).status, 201);
    const mine = await daemon.request('GET', '/api/account/keys?limit=1', undefined, owner);
    assert.equal(mine.body.data.length, 1);
    assert.equal(mine.headers.get('x-total-count'), '2');

    // the daemon backs up a SQLite store only (PostgreSQL has pg_dump): there the list stays empty
    const backupsMade = onPostgres() ? 0 : 2;
    for (let i = 0; i < 2; i++) assert.equal((await daemon.request('POST', '/api/admin/backups', {})).status, backupsMade ? 201 : 409);
    const backups = await daemon.request('GET', '/api/admin/backups?offset=1&limit=5');
    assert.equal(backups.status, 200);
    assert.equal(backups.headers.get('x-total-count'), String(backupsMade));
    assert.equal(backups.body.data.length, Math.max(0, backupsMade - 1));
    assert.equal((await daemon.request('GET', '/api/admin/backups?limit=0')).status, 400);
  });

  test('client rules and tokens keep their own codes for a refused mode or lifetime', async () => {
    const mode = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'verified' });
    assert.equal(mode.status, 400);
    assert.equal(mode.body.error.code, 'INVALID_RECIPIENT_MODE');
    const ttl = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'v', ttlSeconds: 901 });
    assert.equal(ttl.status, 400);
    assert.equal(ttl.body.error.code, 'INVALID_TTL');
    const type = await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'v', ttlSeconds: 'long' });
    assert.equal(type.body.error.code, 'VALIDATION_FAILED');
  });
});
