// Channels end to end on the sandbox: create, get (preview), follow, mute, list, delete by the owner only, newsletter.update events.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pairedSession, startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../../helpers/events.js';
import { selfSignedCertificate } from '../../helpers/tls.js';

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 2)]);

let daemon: TestDaemon;
let events: EventCollector;
let server: Server;
let base: string;

before(async () => {
  const tls = selfSignedCertificate();
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    if (req.url === '/logo.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(JPEG);
    else res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: tls.certFile } });
  events = await collectEvents(daemon);
  await pairedSession(daemon, 'owner', '+15550500001');
  await pairedSession(daemon, 'fan', '+15550500002');
  await pairedSession(daemon, 'other', '+15550500003');
});

after(async () => {
  events.close();
  await daemon.cleanup();
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const api = (method: string, session: string, path: string, body?: unknown) => daemon.request(method, `/api/sessions/${session}${path}`, body);
const ch = (id: string, rest = '') => `/channels/${encodeURIComponent(id)}${rest}`;

describe('channels', () => {
  let channelId: string;

  test('create: 201 with the channel record; newsletter.update created; body rules', async () => {
    const res = await api('POST', 'owner', '/channels', { session: 'owner', name: 'News', description: 'Daily news', profileUrl: `${base}/logo.jpg` });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    channelId = res.body.data.channelId;
    assert.match(channelId, /^\d+@newsletter$/);
    assert.deepEqual(res.body.data, {
      channelId,
      lid: channelId,
      name: 'News',
      description: 'Daily news',
      profileUrl: `${base}/logo.jpg`,
      followers: 0,
      muted: false,
      preview: false,
      role: 'owner',
    });
    const created = await events.next((e) => e.session === 'owner' && e.event === 'newsletter.update' && e.payload.id === channelId);
    assert.equal(created.payload.action, 'created');
    assert.equal(created.payload.name, 'News');

    const plain = await api('POST', 'owner', '/channels', { session: 'owner', name: 'Plain' });
    assert.equal(plain.status, 201);
    assert.equal(plain.body.data.profileUrl, null);
    assert.equal(plain.body.data.description, '');
    assert.equal((await api('POST', 'owner', '/channels', { session: 'fan', name: 'X' })).body.error.details[0].path, '/session');
    assert.equal((await api('POST', 'owner', '/channels', { session: 'owner' })).status, 400);
    const badUrl = await api('POST', 'owner', '/channels', { session: 'owner', name: 'X', profileUrl: 'ftp://example.com/a.jpg' });
    assert.equal(badUrl.status, 400);
    assert.equal(badUrl.body.error.code, 'MEDIA_URL_REJECTED');
  });

  test('a session that does not follow sees the channel in preview mode', async () => {
    const res = await api('GET', 'fan', ch(channelId));
    assert.equal(res.status, 200);
    assert.equal(res.body.data.preview, true);
    assert.equal(res.body.data.role, 'guest');
    assert.equal(res.body.data.followers, 0);
    assert.equal((await api('GET', 'fan', ch('120363999999999999@newsletter'))).body.error.code, 'CHANNEL_NOT_FOUND');
    assert.equal((await api('GET', 'fan', ch('not-a-channel'))).status, 400);
    assert.equal((await api('GET', 'fan', ch(channelId.split('@')[0]!))).body.data.lid, channelId);
  });

  test('follow: newsletter.update followed; followers counted; listed for the follower and the owner', async () => {
    const res = await api('POST', 'fan', ch(channelId, '/follow'));
    assert.equal(res.status, 200);
    assert.equal(res.body.data.success, true);
    await events.next((e) => e.session === 'fan' && e.event === 'newsletter.update' && e.payload.id === channelId && e.payload.action === 'followed');
    const seen = (await api('GET', 'fan', ch(channelId))).body.data;
    assert.equal(seen.preview, false);
    assert.equal(seen.role, 'follower');
    assert.equal((await api('GET', 'owner', ch(channelId))).body.data.followers, 1);

    const fanList = await api('GET', 'fan', '/channels');
    assert.equal(fanList.headers.get('x-total-count'), '1');
    assert.deepEqual(fanList.body.data.map((c: { lid: string }) => c.lid), [channelId]);
    const ownerList = await api('GET', 'owner', '/channels?limit=1');
    assert.equal(ownerList.headers.get('x-total-count'), '2');
    assert.equal(ownerList.body.data.length, 1);
    assert.equal((await api('GET', 'other', '/channels')).body.data.length, 0);
  });

  test('mute and unmute a followed channel; muting one not followed is refused', async () => {
    assert.equal((await api('POST', 'fan', ch(channelId, '/mute'))).status, 200);
    await events.next((e) => e.session === 'fan' && e.event === 'newsletter.update' && e.payload.action === 'muted');
    assert.equal((await api('GET', 'fan', ch(channelId))).body.data.muted, true);
    assert.equal((await api('GET', 'fan', '/channels')).body.data[0].muted, true);
    assert.equal((await api('GET', 'owner', ch(channelId))).body.data.muted, false);
    assert.equal((await api('DELETE', 'fan', ch(channelId, '/mute'))).status, 200);
    await events.next((e) => e.session === 'fan' && e.event === 'newsletter.update' && e.payload.action === 'unmuted');
    assert.equal((await api('GET', 'fan', ch(channelId))).body.data.muted, false);
    const notFollowing = await api('POST', 'other', ch(channelId, '/mute'));
    assert.equal(notFollowing.status, 400);
    assert.match(notFollowing.body.error.message, /follow/);
  });

  test('unfollow: gone from the follower\'s list; the owner cannot unfollow', async () => {
    assert.equal((await api('DELETE', 'fan', ch(channelId, '/follow'))).status, 200);
    await events.next((e) => e.session === 'fan' && e.event === 'newsletter.update' && e.payload.action === 'unfollowed');
    assert.equal((await api('GET', 'fan', '/channels')).body.data.length, 0);
    assert.equal((await api('GET', 'owner', ch(channelId))).body.data.followers, 0);
    assert.equal((await api('DELETE', 'owner', ch(channelId, '/follow'))).status, 400);
  });

  test('delete: owner only (403 NOT_CHANNEL_OWNER); followers hear newsletter.update deleted; then 404', async () => {
    await api('POST', 'fan', ch(channelId, '/follow'));
    const denied = await api('DELETE', 'fan', ch(channelId));
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'NOT_CHANNEL_OWNER');
    const res = await api('DELETE', 'owner', ch(channelId));
    assert.equal(res.status, 200);
    for (const s of ['owner', 'fan']) {
      await events.next((e) => e.session === s && e.event === 'newsletter.update' && e.payload.id === channelId && e.payload.action === 'deleted', 5000, `deleted on ${s}`);
    }
    const gone = await api('GET', 'owner', ch(channelId));
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'CHANNEL_NOT_FOUND');
    assert.equal((await api('GET', 'fan', '/channels')).body.data.length, 0);
    assert.equal((await api('GET', 'owner', '/channels')).headers.get('x-total-count'), '1');
  });
});
