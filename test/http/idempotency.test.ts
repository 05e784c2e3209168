// Idempotent sends (issue 30): the same Idempotency-Key and request send once, across a restart too; a retry gets the
// first answer; a key is its caller's alone; a request refused before it sent gives its key up; bad keys are 400.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';

const dataDir = mkdtempSync(join(tmpdir(), 'idempotency-'));
let port: number;
let daemon: TestDaemon;
before(async () => {
  port = await freePort();
  daemon = await startDaemon({ dataDir, port, env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await pairedSession(daemon, 'alice', '+15550740001');
});
after(async () => {
  await daemon?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

const send = (text: string, key?: string, session = 'alice', apiKey?: string) =>
  daemon.request('POST', `/api/sessions/${session}/messages/send`, { chatId: '+15550749999', type: 'text', text }, apiKey, key === undefined ? {} : { 'Idempotency-Key': key });

async function sentTexts(): Promise<string[]> {
  const list = await daemon.request('GET', '/api/sessions/alice/messages');
  return list.body.data.filter((m: any) => m.fromMe).map((m: any) => m.text);
}

test('the same key and request send once: the retry gets the first answer, marked replayed', async () => {
  const first = await send('once', 'order-1001');
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.headers.get('idempotent-replayed'), null);
  const again = await send('once', 'order-1001');
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(again.body.data, first.body.data);
  assert.deepEqual((await sentTexts()).filter((t) => t === 'once'), ['once']);

  const reused = await send('another text', 'order-1001');
  assert.equal(reused.status, 409);
  assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
  const without = [await send('no key'), await send('no key')];
  assert.ok(without.every((r) => r.status === 200));
  assert.equal((await sentTexts()).filter((t) => t === 'no key').length, 2, 'without a key every request sends');
});

test('two at once with one key: one sends, the other is told it is in flight or gets the answer', async () => {
  const [a, b] = await Promise.all([send('racing', 'race-1'), send('racing', 'race-1')]);
  const statuses = [a.status, b.status].sort();
  assert.ok(statuses[0] === 200 && (statuses[1] === 200 || statuses[1] === 409), statuses.join(','));
  const refused = [a, b].find((r) => r.status === 409);
  if (refused) assert.equal(refused.body.error.code, 'IDEMPOTENCY_KEY_IN_FLIGHT');
  assert.deepEqual((await sentTexts()).filter((t) => t === 'racing'), ['racing']);
});

test("a key is its caller's: another API key's request with the same key sends", async () => {
  const key = await daemon.request('POST', '/api/admin/keys', { name: 'sender', scopes: ['messages:send'] });
  assert.equal(key.status, 201);
  const mine = await send('shared key', 'shared-1');
  const theirs = await send('shared key', 'shared-1', 'alice', key.body.data.key);
  assert.equal(mine.status, 200);
  assert.equal(theirs.status, 200);
  assert.equal(theirs.headers.get('idempotent-replayed'), null);
  assert.notEqual(theirs.body.data.messageId, mine.body.data.messageId);
});

test('a request refused before it sent gives its key up; bad keys are 400 and send nothing', async () => {
  const missing = await send('later', 'late-1', 'carol');
  assert.equal(missing.status, 404);
  await pairedSession(daemon, 'carol', '+15550740003');
  const retried = await send('later', 'late-1', 'carol');
  assert.equal(retried.status, 200, JSON.stringify(retried.body));
  assert.equal(retried.headers.get('idempotent-replayed'), null);

  for (const bad of ['has space', 'x'.repeat(256), 'tab\there', '']) {
    const res = await send('bad key', bad);
    assert.equal(res.status, 400, bad);
    assert.equal(res.body.error.code, 'VALIDATION_FAILED');
    assert.match(res.body.error.message, /Idempotency-Key/);
  }
  assert.equal((await sentTexts()).filter((t) => t === 'bad key').length, 0);
});

test('after a restart the retry still gets the first answer and nothing is sent again', async () => {
  const first = await send('before restart', 'restart-1');
  assert.equal(first.status, 200);
  assert.equal(await daemon.stop(), 0);
  daemon = await startDaemon({ dataDir, port, env: { GATEWAY_LOG_LEVEL: 'warn' } });
  await waitFor(async () => (await daemon.request('GET', '/api/sessions/alice')).body.data.status === 'CONNECTED', 30_000, 'alice back');
  const again = await send('before restart', 'restart-1');
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(again.body.data, first.body.data);
  assert.deepEqual((await sentTexts()).filter((t) => t === 'before restart'), ['before restart']);
});
