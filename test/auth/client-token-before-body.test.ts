// A client token is refused on what needs no body (its allowed actions, the session in the path) before the body is
// read: a browser token that may not send is never made to wait for, nor allowed to occupy the daemon with, a body.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let daemon: TestDaemon;
let token: string;

before(async () => {
  daemon = await startDaemon({ env: { GATEWAY_LOG_LEVEL: 'warn' } });
  for (const name of ['a', 'b']) assert.equal((await daemon.request('POST', '/api/sessions', { name })).status, 201);
  const rules = await daemon.request('PUT', '/api/sessions/a/client-rules', { recipientMode: 'any', allowedActions: 'read_contact,send_typing' });
  assert.equal(rules.status, 200, JSON.stringify(rules.body));
  token = (await daemon.request('POST', '/api/client-tokens', { session: 'a', ephemeralId: 'visitor' })).body.data.token;
});
after(() => daemon.cleanup());

/** A body that is not JSON: answered INVALID_JSON only if the daemon read it. */
async function postJunk(path: string): Promise<{ status: number; code: string }> {
  const res = await fetch(`${daemon.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: '{not json',
  });
  return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
}

test('an action the rules do not allow is refused before the body is read', async () => {
  assert.deepEqual(await postJunk('/api/messages/send'), { status: 403, code: 'ACTION_NOT_ALLOWED' });
});

test("another session in the path is refused before the body is read", async () => {
  assert.deepEqual(await postJunk('/api/sessions/b/messages/typing'), { status: 403, code: 'SESSION_MISMATCH' });
});

test('an allowed action on its own session still reads and validates the body', async () => {
  assert.deepEqual(await postJunk('/api/sessions/a/messages/typing'), { status: 400, code: 'INVALID_JSON' });
});
