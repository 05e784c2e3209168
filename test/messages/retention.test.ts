// Message retention (messages.retentionDays): by default ("keep") nothing is pruned; with a number of days, a daemon
// deletes at start (then hourly) the messages older than that with their media records and files (the local blob and
// the S3 object), and the chat list (last message, unread count) and the search index follow. Runs on either store.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { freePort, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { openDaemonDb } from '../helpers/daemon-db.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { png } from '../engine/samples.js';

const OLD = '+15550781111';
const RECENT = '+15550782222';
const MIXED = '+15550783333';
const DAY_MS = 86_400_000;

let s3: TestS3;
let dataDir: string;
let port: number;
let daemon: TestDaemon | undefined;

before(async () => {
  s3 = await startS3();
  dataDir = mkdtempSync(join(tmpdir(), 'retention-'));
  port = await freePort();
});
after(async () => {
  await daemon?.stop();
  await s3?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const boot = (config?: string) => startDaemon({ dataDir, port, env: { GATEWAY_LOG_LEVEL: 'warn' }, ...(config ? { config } : {}) });
const texts = async (chat: string) => {
  const res = await daemon!.request('GET', `/api/sessions/alice/chats/${encodeURIComponent(chat)}/messages?limit=100`);
  return res.status === 404 ? [] : (res.body.data.messages as Array<{ text: string | null; caption?: string }>).map((m) => m.text ?? m.caption ?? null);
};
const inbound = async (from: string, fields: Record<string, unknown>) => {
  const res = await daemon!.request('POST', '/api/sandbox/sessions/alice/inbound', { from, ...fields });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.messageId as string;
};
const search = async (q: string) => (await daemon!.request('GET', `/api/sessions/alice/messages/search?q=${q}`)).body.data.results as unknown[];
const chat = async (id: string) => (await daemon!.request('GET', `/api/sessions/alice/chats/${encodeURIComponent(id)}`)).body.data;

test('retentionDays prunes old messages with their media file (local and S3); chat list and search follow; "keep" prunes nothing', async () => {
  daemon = await boot();
  await pairedSession(daemon, 'alice', '+15550780001');
  assert.equal((await daemon.request('PUT', '/api/admin/settings', { s3: s3.settings })).status, 200);

  const imageId = await inbound(OLD, { type: 'image', base64: png(24).toString('base64'), caption: 'ancient picture' });
  await inbound(OLD, { type: 'text', text: 'ancient zebra' });
  await inbound(RECENT, { type: 'text', text: 'recent zebra' });
  await inbound(MIXED, { type: 'text', text: 'ancient unread' });
  await inbound(MIXED, { type: 'text', text: 'recent unread' });
  await waitFor(async () => ((await texts(MIXED)).length === 2 && (await texts(OLD)).length === 2 ? true : undefined));
  const stored = await daemon.request('GET', `/api/sessions/alice/messages/${imageId}`);
  const mediaId = stored.body.data.mediaId as string;
  assert.ok(mediaId, JSON.stringify(stored.body));
  const persisted = await daemon.request('POST', `/api/sessions/alice/media/${mediaId}/persist`);
  assert.equal(persisted.status, 200, JSON.stringify(persisted.body));
  const s3Key = persisted.body.data.key as string;
  await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: s3Key }));
  await waitFor(async () => ((await search('zebra')).length === 2 ? true : undefined), 10_000, 'both zebras indexed');
  assert.equal((await chat(MIXED)).unreadCount, 2);
  await daemon.stop();

  // three of the messages become 100 days old
  const db = openDaemonDb(dataDir);
  let blob: string;
  try {
    const aged = await db
      .prepare("UPDATE messages SET timestamp = ? WHERE session = 'alice' AND text IN ('ancient picture', 'ancient zebra', 'ancient unread')")
      .run(Date.now() - 100 * DAY_MS);
    assert.equal(aged.changes, 3);
    // what happened to a message never stored (a reaction to one older than the store), long ago, and a recent one
    for (const [id, at] of [['NEVER-STORED-OLD', Date.now() - 100 * DAY_MS], ['NEVER-STORED-NEW', Date.now()]] as const) {
      await db.prepare("INSERT INTO message_activity (session, chat_id, message_id, kind, actor, value, at) VALUES ('alice', ?, ?, 'reaction', ?, '👍', ?)").run(`${OLD.slice(1)}@s.whatsapp.net`, id, `${OLD.slice(1)}@s.whatsapp.net`, at);
    }
    blob = (await db.prepare('SELECT blob FROM media WHERE id = ?').pluck().get(mediaId)) as string;
  } finally {
    await db.close();
  }
  const blobFile = join(dataDir, 'media', blob);
  assert.ok(existsSync(blobFile), 'the image is held locally');

  // the default keeps everything
  daemon = await boot();
  await new Promise((done) => setTimeout(done, 500));
  assert.equal((await texts(OLD)).length, 2, 'keep: nothing pruned');
  assert.ok(existsSync(blobFile));
  await daemon.stop();

  // 30 days: the three go at start, with the image's blob and S3 object
  daemon = await boot('messages:\n  retentionDays: 30\n');
  await waitFor(async () => ((await texts(OLD)).length === 0 ? true : undefined), 10_000, 'the old messages pruned');
  assert.deepEqual(await texts(RECENT), ['recent zebra']);
  assert.deepEqual(await texts(MIXED), ['recent unread']);
  assert.equal((await daemon.request('GET', `/api/sessions/alice/messages/${imageId}`)).status, 404);
  assert.equal((await daemon.request('GET', `/api/sessions/alice/media/${mediaId}`)).status, 404);
  await waitFor(() => (existsSync(blobFile) ? undefined : true), 5000, 'the blob removed');
  await assert.rejects(s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: s3Key })), (err: { name?: string }) => err.name === 'NotFound');
  assert.equal((await search('zebra')).length, 1, 'the search index lost the pruned one');
  assert.equal((await search('ancient')).length, 0);

  // the chat list: a chat left with no message shows none and nothing unread; the other counts only what is left
  const emptied = await chat(OLD);
  assert.equal(emptied.lastMessage, null);
  assert.equal(emptied.unreadCount, 0);
  const mixed = await chat(MIXED);
  assert.equal(mixed.lastMessage.text, 'recent unread');
  assert.equal(mixed.unreadCount, 1);
  const list = (await daemon.request('GET', '/api/sessions/alice/chats')).body.data.chats as Array<{ id?: string; chatId?: string }>;
  assert.equal(list.length, 3, 'the chats stay listed');
  await daemon.stop();
  const after = openDaemonDb(dataDir);
  try {
    assert.deepEqual(await after.prepare("SELECT message_id FROM message_activity WHERE message_id LIKE 'NEVER-STORED-%'").pluck().all(), ['NEVER-STORED-NEW'], 'the old activity of a message never stored went with the old messages');
  } finally {
    await after.close();
  }
});
