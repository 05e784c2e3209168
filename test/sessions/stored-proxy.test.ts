import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-stored-proxy-'));
let daemon: TestDaemon | undefined;
after(async () => {
  await daemon?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a proxy stored under a looser URL policy is refused at start with PROXY_URL_REJECTED, not retried forever', async () => {
  daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'warn' } });
  const created = await daemon.request('POST', '/api/sessions', { name: 'p', proxy: 'http://10.0.0.5:3128' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await daemon.stop();

  daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' } });
  const started = await daemon.request('POST', '/api/sessions/p/start');
  assert.equal(started.status, 400, JSON.stringify(started.body));
  assert.equal(started.body.error.code, 'PROXY_URL_REJECTED');
  const row = await daemon.request('GET', '/api/sessions/p');
  assert.equal(row.body.data.status, 'DISCONNECTED');
  // nothing marked it to run: the next start of the daemon does not try it again
  await daemon.stop();
  daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' } });
  assert.doesNotMatch(daemon.output(), /restore failed/);
  assert.equal((await daemon.request('GET', '/api/sessions/p')).body.data.status, 'DISCONNECTED');
});
