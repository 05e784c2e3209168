// What a Baileys session reports about itself (issue 19): a pairing-code login restarts without a status change or a
// counted reconnect, whichever way the server ends the registering connection; sessions.qrRotationSeconds and
// qrMaxRotations hold; a connection that goes down carries its cause (session `lastError`, session.status).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import type { PairingRestart } from '../support/wa-emulator/index.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const FAST_RECONNECT = ['sessions:', '  reconnectBaseMs: 40', '  reconnectMaxMs: 200', '  reconnectMaxAttempts: 2', ''].join('\n');

describe('baileys: what a session reports during pairing', () => {
  let target: BaileysTarget;
  let events: EventCollector;

  before(async () => {
    target = await startBaileysTarget();
    events = await collectEvents(target.daemon);
  });

  after(async () => {
    events?.close();
    await target?.close();
  });

  const statuses = (session: string) => events.all((e) => e.session === session && e.event === 'session.status').map((e) => `${e.payload.status}/${e.payload.statusReason}`);
  const reconnectLogs = (session: string) => target.daemon.output().split('\n').filter((l) => l.includes('"reconnecting"') && l.includes(`"session":"${session}"`));

  const pairByCode = async (session: string, phone: string, restart: PairingRestart) => {
    target.emu.control.createAccount({ phone, pushName: session });
    assert.equal((await target.daemon.request('POST', '/api/sessions', { name: session, start: true })).status, 201);
    const res = await target.daemon.request('POST', `/api/sessions/${session}/pairing/code`, { phoneNumber: `+${phone}` });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await target.emu.control.enterPairingCode(phone, res.body.data.code, 10_000, restart);
    await events.next((e) => e.session === session && e.event === 'session.connected', 15_000, `${session} connected`);
    // late status events (a reconnect would come right after the close) have time to arrive
    await new Promise((r) => setTimeout(r, 500));
  };

  for (const restart of ['stream-error', 'socket'] as const) {
    it(`pairing by code, the server restarting with ${restart === 'socket' ? 'a bare close' : '515'}: no status change, no reconnect counted`, async () => {
      const session = `code-${restart}`;
      await pairByCode(session, restart === 'socket' ? '15550301001' : '15550301003', restart);
      assert.deepEqual(statuses(session), ['CONNECTING/SCAN_QR', 'CONNECTED/null']);
      assert.deepEqual(reconnectLogs(session), []);
      assert.equal((await target.daemon.request('GET', `/api/sessions/${session}`)).body.data.lastError, null);
    });
  }

  it('pairing by QR: the same', async () => {
    await target.pairedSession('byqr', '15550301002');
    await events.next((e) => e.session === 'byqr' && e.event === 'session.connected', 15_000, 'byqr connected');
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(statuses('byqr'), ['CONNECTING/SCAN_QR', 'CONNECTED/null']);
    assert.deepEqual(reconnectLogs('byqr'), []);
  });

  it('a dropped connection carries its cause into session.status and the session (lastError), logged at info', async () => {
    const device = target.emu.control.devices('15550301002')[0]!.jid;
    await target.emu.control.waitForOnline(device);
    assert.equal(target.emu.control.dropConnection(device, 503), true);
    const down = await events.next((e) => e.session === 'byqr' && e.event === 'session.status' && e.payload.statusReason === 'AUTO_RECONNECT', 10_000, 'AUTO_RECONNECT');
    assert.equal(down.payload.lastError.code, 'SERVICE_UNAVAILABLE');
    assert.match(down.payload.lastError.message, /503/);
    assert.ok(Date.parse(down.payload.lastError.at) <= Date.now());
    await events.next((e) => e.session === 'byqr' && e.event === 'session.connected' && Date.parse(e.timestamp) >= Date.parse(down.timestamp), 15_000, 'reconnected');
    // kept after the reconnect, as the last failure
    const view = (await target.daemon.request('GET', '/api/sessions/byqr')).body.data;
    assert.equal(view.status, 'CONNECTED');
    assert.deepEqual(view.lastError, down.payload.lastError);
    const logged = target.daemon.output().split('\n').filter((l) => l.includes('"connection closed"') && l.includes('"session":"byqr"')).map((l) => JSON.parse(l));
    assert.equal(logged.length, 1);
    assert.equal(logged[0].level, 30, 'info');
    assert.equal(logged[0].cause, 'SERVICE_UNAVAILABLE');
  });
});

describe('baileys: sessions.qrRotationSeconds and qrMaxRotations', () => {
  let target: BaileysTarget;
  let events: EventCollector;

  before(async () => {
    target = await startBaileysTarget({ config: 'sessions:\n  qrRotationSeconds: 1\n  qrMaxRotations: 2\n' });
    events = await collectEvents(target.daemon);
  });

  after(async () => {
    events?.close();
    await target?.close();
  });

  it('rotates the QR every qrRotationSeconds and stops with QR_TIMEOUT after qrMaxRotations codes', async () => {
    assert.equal((await target.daemon.request('POST', '/api/sessions', { name: 'unscanned', start: true })).status, 201);
    const timedOut = await events.next((e) => e.session === 'unscanned' && e.event === 'session.status' && e.payload.statusReason === 'QR_TIMEOUT', 15_000, 'QR_TIMEOUT');
    assert.equal(timedOut.payload.status, 'DISCONNECTED');
    assert.equal(timedOut.payload.lastError.code, 'QR_TIMEOUT');
    const qrs = events.all((e) => e.session === 'unscanned' && e.event === 'session.qr');
    assert.equal(qrs.length, 2);
    for (const qr of qrs) {
      const lifetime = Date.parse(qr.payload.expiresAt) - Date.parse(qr.timestamp);
      assert.ok(lifetime > 500 && lifetime <= 1_500, `QR lifetime ${lifetime} ms`);
    }
    // Baileys' own QR timer also followed the setting: the second code came about a second after the first
    const gap = Date.parse(qrs[1]!.timestamp) - Date.parse(qrs[0]!.timestamp);
    assert.ok(gap >= 700 && gap < 5_000, `gap between QR codes ${gap} ms`);
    const view = (await target.daemon.request('GET', '/api/sessions/unscanned')).body.data;
    assert.equal(view.statusReason, 'QR_TIMEOUT');
    assert.equal((await target.daemon.request('GET', '/api/sessions/unscanned/pairing/qr')).status, 409);
  });
});

describe('baileys: an unreachable network says why', () => {
  let daemon: TestDaemon;
  let dataDir: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'baileys-refused-'));
    const closedPort = await freePort();
    daemon = await startDaemon({ dataDir, config: `${FAST_RECONNECT}engine:\n  baileys:\n    websocketUrl: ws://127.0.0.1:${closedPort}/ws/chat\n`, env: { GATEWAY_DEFAULT_ENGINE: 'baileys' } });
  });

  after(async () => {
    await daemon?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refused connections: AUTO_RECONNECT and then FAILED carry NETWORK_REFUSED', async () => {
    const events = await collectEvents(daemon);
    try {
      assert.equal((await daemon.request('POST', '/api/sessions', { name: 'lost', start: true })).status, 201);
      const failed = await events.next((e) => e.event === 'session.status' && e.payload.statusReason === 'FAILED', 15_000, 'FAILED');
      assert.equal(failed.payload.lastError.code, 'NETWORK_REFUSED');
      assert.match(failed.payload.lastError.message, /ECONNREFUSED/);
      const retrying = events.all((e) => e.event === 'session.status' && e.payload.statusReason === 'AUTO_RECONNECT' && e.payload.lastError);
      assert.ok(retrying.length >= 1);
      for (const e of retrying) assert.equal(e.payload.lastError.code, 'NETWORK_REFUSED');
      const view = (await daemon.request('GET', '/api/sessions/lost')).body.data;
      assert.equal(view.lastError.code, 'NETWORK_REFUSED');
    } finally {
      events.close();
    }
  });
});
