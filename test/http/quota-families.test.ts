// The per-key quotas count a key's family (review finding): a key minting child keys must not multiply its share of
// the event streams, webhooks and downloads, as it may not multiply its rate limit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { openEventStream } from '../helpers/events.js';

const CONFIG = `
events:
  maxStreams: 8
  maxStreamsPerKey: 2
webhooks:
  maxWebhooks: 20
  maxWebhooksPerKey: 2
`;

let daemon: TestDaemon;
const streams: AbortController[] = [];

before(async () => {
  daemon = await startDaemon({ config: CONFIG, env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(async () => {
  for (const stream of streams) stream.abort();
  await daemon.cleanup();
});

async function createKey(name: string, by: string, path: string): Promise<string> {
  const res = await daemon.request('POST', path, { name, scopes: ['webhooks:manage', 'keys:manage'] }, by);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.key as string;
}

const openStream = (key: string) => openEventStream(daemon, key, streams);

test('a key and the keys made from it share one stream quota; an unrelated key keeps its own', async () => {
  const parent = await createKey('parent', daemon.masterKey, '/api/admin/keys');
  const child = await createKey('child', parent, '/api/account/keys');
  const grandchild = await createKey('grandchild', child, '/api/account/keys');
  const unrelated = await createKey('unrelated', daemon.masterKey, '/api/admin/keys');
  assert.equal(await openStream(parent), 200);
  assert.equal(await openStream(child), 200);
  assert.equal(await openStream(grandchild), 503, "the family's quota of 2 is taken");
  assert.equal(await openStream(parent), 503);
  assert.equal(await openStream(unrelated), 200);
});

test('a key and the keys made from it share one webhook quota', async () => {
  const parent = await createKey('hooks-parent', daemon.masterKey, '/api/admin/keys');
  const child = await createKey('hooks-child', parent, '/api/account/keys');
  const register = (key: string, n: number) => daemon.request('POST', '/api/webhooks', { url: `http://127.0.0.1:9/hook-${n}` }, key);
  assert.equal((await register(parent, 1)).status, 201);
  assert.equal((await register(child, 2)).status, 201);
  const refused = await register(child, 3);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'LIMIT_REACHED');
});
