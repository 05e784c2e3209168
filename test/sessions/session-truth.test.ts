// What a session says about itself across a daemon stop and a network drop (issue 19, on the sandbox engine): a
// graceful stop records the sessions as stopped (no event), so the restart's first status event does not claim CONNECTED, while
// restore still brings them back; a drop carries its cause (`lastError`).
import { after, before, test } from 'node:test';
import { openDaemonDb } from '../helpers/daemon-db.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pairedSession, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents } from '../helpers/events.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-session-truth-'));
let daemon: TestDaemon;
let receiver: Receiver;

before(async () => {
  receiver = await startReceiver();
  daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'info' } });
});

after(async () => {
  await daemon?.cleanup();
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const storedRow = async (name: string) => {
  const db = await openDaemonDb(dataDir, { readonly: true, fileMustExist: true });
  try {
    return (await db.prepare<{ status: string; status_reason: string | null; should_run: number }>('SELECT status, status_reason, should_run FROM sessions WHERE name = ?').get(name))!;
  } finally {
    await db.close();
  }
};

test('a graceful stop records the running sessions as stopped; the restart restores them and its first event says so', async () => {
  const hook = await daemon.request('POST', '/api/webhooks', { url: `${receiver.base}/status`, events: ['session.status'] });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  await pairedSession(daemon, 'keeper', '+15550304001');
  await receiver.waitForCount(2, '/status');
  assert.equal(await daemon.stop(), 0);

  assert.deepEqual(await storedRow('keeper'), { status: 'DISCONNECTED', status_reason: 'MANUAL_STOP', should_run: 1 });
  const stoppedAt = Date.now();

  daemon = await startDaemon({ dataDir, env: { GATEWAY_LOG_LEVEL: 'info' } });
  await waitFor(async () => (await daemon.request('GET', '/api/sessions/keeper')).body.data.status === 'CONNECTED', 10_000, 'keeper restored');
  const afterRestart = await waitFor(() => {
    const events = receiver.on('/status').map((d) => d.json).filter((e) => e.session === 'keeper' && Date.parse(e.timestamp) >= stoppedAt);
    return events.some((e) => e.payload.status === 'CONNECTED') ? events : undefined;
  }, 10_000, 'status events after the restart');
  afterRestart.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
  assert.deepEqual(afterRestart[0].payload, { status: 'CONNECTING', statusReason: null, previousStatus: 'DISCONNECTED', previousStatusReason: 'MANUAL_STOP' });
  assert.equal(afterRestart.at(-1).payload.status, 'CONNECTED');
  // the stop is recorded, not announced: the daemon was going down
  assert.equal(receiver.on('/status').map((d) => d.json).filter((e) => e.session === 'keeper' && e.payload.statusReason === 'MANUAL_STOP').length, 0);
});

test('a dropped sandbox session carries the cause in session.status and lastError', async () => {
  const events = await collectEvents(daemon);
  try {
    assert.equal((await daemon.request('GET', '/api/sessions/keeper')).body.data.lastError, null);
    const dropped = await daemon.request('POST', '/api/sandbox/sessions/keeper/disconnect', { reason: 'TEMPORARY_BAN' });
    assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
    const down = await events.next((e) => e.session === 'keeper' && e.event === 'session.status' && e.payload.statusReason === 'TEMPORARY_BAN', 10_000, 'TEMPORARY_BAN');
    assert.equal(down.payload.lastError.code, 'TEMPORARILY_BANNED');
    assert.equal(down.payload.lastError.logoutReason, 'temporarily_banned');
    assert.equal(down.payload.lastError.message, 'dropped by the sandbox network');
    const view = (await daemon.request('GET', '/api/sessions/keeper')).body.data;
    assert.deepEqual(view.lastError, down.payload.lastError);
    // the daemon's log reaches this process through a pipe, a moment after the event did
    await waitFor(() => /"msg":"connection closed"/.test(daemon.output()), 5000, 'the "connection closed" log line');
  } finally {
    events.close();
  }
});
