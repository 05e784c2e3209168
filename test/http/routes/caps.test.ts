// Caps on what a caller can make the daemon keep (issue 16): webhooks.maxWebhooks and sessions.maxSessions, set low here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';

let daemon: TestDaemon;
before(async () => {
  daemon = await startDaemon({ config: 'webhooks:\n  maxWebhooks: 2\nsessions:\n  maxSessions: 2\n', env: { GATEWAY_LOG_LEVEL: 'warn' } });
});
after(() => daemon.cleanup());

describe('caps', () => {
  test('past webhooks.maxWebhooks, a new webhook is 409 LIMIT_REACHED; deleting one makes room', async () => {
    const url = 'http://127.0.0.1:9/hook';
    const first = await daemon.request('POST', '/api/webhooks', { url });
    assert.equal(first.status, 201);
    assert.equal((await daemon.request('POST', '/api/webhooks', { url })).status, 201);
    const third = await daemon.request('POST', '/api/webhooks', { url });
    assert.equal(third.status, 409);
    assert.equal(third.body.error.code, 'LIMIT_REACHED');
    assert.match(third.body.error.message, /webhooks\.maxWebhooks/);
    assert.equal((await daemon.request('GET', '/api/webhooks')).headers.get('x-total-count'), '2');
    // updates are not creations
    assert.equal((await daemon.request('PUT', `/api/webhooks/${first.body.data.id}`, { enabled: false })).status, 200);
    assert.equal((await daemon.request('DELETE', `/api/webhooks/${first.body.data.id}`)).status, 200);
    assert.equal((await daemon.request('POST', '/api/webhooks', { url })).status, 201);
  });

  test('past sessions.maxSessions, a new session is 409 LIMIT_REACHED; deleting one makes room', async () => {
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'one' })).status, 201);
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'two' })).status, 201);
    const third = await daemon.request('POST', '/api/sessions', { name: 'three' });
    assert.equal(third.status, 409);
    assert.equal(third.body.error.code, 'LIMIT_REACHED');
    assert.match(third.body.error.message, /sessions\.maxSessions/);
    // an existing name is still SESSION_EXISTS, not a cap
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'one' })).body.error.code, 'SESSION_EXISTS');
    assert.equal((await daemon.request('GET', '/api/sessions')).body.data.length, 2);
    assert.equal((await daemon.request('DELETE', '/api/sessions/two')).status, 200);
    assert.equal((await daemon.request('POST', '/api/sessions', { name: 'three' })).status, 201);
  });

  test('the caps are validated in gateway.yaml', async () => {
    await assert.rejects(
      startDaemon({ config: 'webhooks:\n  maxWebhooks: 0\n', env: { GATEWAY_LOG_LEVEL: 'warn' } }),
      /maxWebhooks/,
    );
  });
});
