// Baileys session lifecycle through the real daemon: an unreachable network (backoff, then FAILED, daemon healthy),
// kill -9 mid-traffic (back without re-pairing, every burst decrypting, no retry receipts), every injectable close
// code → its status, and delete erasing the session's auth state.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DisconnectReason } from '@whiskeysockets/baileys';
import { classifyClose } from '../../src/engine/baileys/close-codes.js';
import { freePort, startDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { collectEvents, type EventCollector } from '../helpers/events.js';
import type { CloseCode, CloseKind } from '../support/wa-emulator/index.js';
import { countAuthState, readDaemonDb } from './conformance.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const FAST_RECONNECT = ['sessions:', '  reconnectBaseMs: 40', '  reconnectMaxMs: 400', '  reconnectMaxAttempts: 3', ''].join('\n');
const GATEWAY = '15550201001';
const CONTACT = '15550209009';
const jid = (digits: string) => `${digits}@s.whatsapp.net`;

describe('baileys: unreachable network', () => {
  let daemon: TestDaemon;
  let dataDir: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'baileys-unreachable-'));
    const closedPort = await freePort();
    daemon = await startDaemon({
      dataDir,
      config: `${FAST_RECONNECT}engine:\n  baileys:\n    websocketUrl: ws://127.0.0.1:${closedPort}/ws/chat\n`,
      env: { GATEWAY_DEFAULT_ENGINE: 'baileys' },
    });
  });

  after(async () => {
    await daemon?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('retries with growing delays, ends DISCONNECTED/FAILED, and the daemon answers throughout', async () => {
    const events = await collectEvents(daemon, 'session=lost');
    let healthChecks = 0;
    let healthy = true;
    const probe = setInterval(() => {
      void fetch(`${daemon.url}/api/health`).then(
        (r) => {
          healthChecks += 1;
          if (!r.ok) healthy = false;
        },
        () => (healthy = false),
      );
    }, 20);
    try {
      const created = await daemon.request('POST', '/api/sessions', { name: 'lost', start: true, engine: 'baileys' });
      assert.equal(created.status, 201);
      const failed = await events.next((e) => e.event === 'session.status' && e.payload.status === 'DISCONNECTED' && e.payload.statusReason === 'FAILED', 10_000, 'FAILED');
      assert.ok(failed);
      const reasons = events.all((e) => e.event === 'session.status').map((e) => `${e.payload.status}/${e.payload.statusReason}`);
      assert.ok(reasons.includes('CONNECTING/AUTO_RECONNECT'), reasons.join(', '));
      const view = (await daemon.request('GET', '/api/sessions/lost')).body.data;
      assert.equal(view.status, 'DISCONNECTED');
      assert.equal(view.statusReason, 'FAILED');
    } finally {
      clearInterval(probe);
      events.close();
    }
    assert.ok(healthy, 'GET /api/health failed while the session was reconnecting');
    assert.ok(healthChecks > 0);
    // the manager logs each scheduled attempt with its delay: three attempts, growing
    const delays = daemon
      .output()
      .split('\n')
      .filter((l) => l.includes('"reconnecting"') && l.includes('"session":"lost"'))
      .map((l) => JSON.parse(l) as { attempt: number; delayMs: number });
    assert.deepEqual(delays.map((d) => d.attempt), [1, 2, 3]);
    for (let i = 1; i < delays.length; i += 1) assert.ok(delays[i]!.delayMs >= delays[i - 1]!.delayMs, `delays ${delays.map((d) => d.delayMs)}`);
    assert.ok(delays[2]!.delayMs > delays[0]!.delayMs, `delays ${delays.map((d) => d.delayMs)}`);
    // still healthy, and a stopped session can be started again
    assert.equal((await daemon.request('GET', '/api/health')).status, 200);
  });
});

describe('baileys: against the emulator', () => {
  let target: BaileysTarget;
  let events: EventCollector;
  let device = '';

  const status = async () => (await target.daemon.request('GET', '/api/sessions/gw')).body.data;
  const send = async (text: string) => {
    const res = await target.daemon.request('POST', '/api/messages/send', { session: 'gw', chatId: jid(CONTACT), type: 'text', text });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as { messageId: string };
  };
  /** the contact writes; the gateway's event says the text arrived decrypted */
  const roundTrip = async (label: string) => {
    const inbound = `${label} in`;
    await target.emu.control.send(CONTACT, jid(GATEWAY), inbound);
    const got = await events.next((e) => e.session === 'gw' && e.event === 'message.received' && e.payload.text === inbound, 10_000, inbound);
    assert.equal(got.payload.from.phoneNumber, `+${CONTACT}`);
    const outbound = `${label} out`;
    await send(outbound);
    await target.emu.control.waitForInbox(CONTACT, (m) => m.text === outbound, 10_000);
  };

  before(async () => {
    target = await startBaileysTarget({ config: FAST_RECONNECT });
    target.emu.control.createAccount({ phone: CONTACT, pushName: 'Contact' });
    await target.pairedSession('gw', GATEWAY, 'Gateway');
    device = target.emu.control.devices(GATEWAY)[0]!.jid;
    await target.emu.control.waitForOnline(device);
    events = await collectEvents(target.daemon);
  });

  after(async () => {
    events?.close();
    await target?.close();
  });

  it('survives kill -9 mid-traffic: back CONNECTED without re-pairing, and messages decrypt both ways', async () => {
    await roundTrip('before');
    const lidBefore = (await status()).lid;
    // traffic both ways while the daemon dies; the contact's burst ids, by number
    let stop = false;
    let n = 0;
    const burstIds = new Map<string, number>();
    const sendErrors: string[] = [];
    const inbound = (async () => {
      while (!stop) {
        n += 1;
        const k = n;
        // a send the emulator's phone could not make is not counted (and not expected at the gateway)
        await target.emu.control.send(CONTACT, jid(GATEWAY), `burst ${k}`).then(
          (sent) => burstIds.set(sent.id, k),
          (err: unknown) => sendErrors.push(`burst ${k}: ${String(err)}`),
        );
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const outbound = (async () => {
      for (let i = 0; !stop; i += 1) {
        await target.daemon.request('POST', '/api/messages/send', { session: 'gw', chatId: jid(CONTACT), type: 'text', text: `out ${i}` }).catch(() => undefined);
      }
    })();
    const burstNumber = (text: unknown) => (typeof text === 'string' && /^burst \d+$/.test(text) ? Number(text.slice(6)) : undefined);
    await events.next((e) => e.session === 'gw' && e.event === 'message.received' && (burstNumber(e.payload.text) ?? 0) >= 10, 10_000, 'ten bursts');
    const oldEvents = events;
    oldEvents.close();
    // the connections the gateway had before the kill (stanzas written to them may die with the process)
    const oldConnections = new Set(target.emu.control.stanzas({ device }).map((s) => s.connectionId));
    await target.killAndRestart();
    stop = true;
    await Promise.all([inbound, outbound]);
    events = await collectEvents(target.daemon);

    await waitFor(async () => (await status()).status === 'CONNECTED', 15_000, 'gw CONNECTED after kill -9');
    assert.equal((await status()).lid, lidBefore);
    assert.deepEqual(target.emu.control.devices(GATEWAY).map((d) => d.jid), [device], 'still the same linked device: no new pairing');
    await target.emu.control.waitForOnline(device);
    // what the contact sent while the daemon was down arrives from the offline queue, decrypted
    const last = Math.max(...burstIds.values());
    await events.next((e) => e.session === 'gw' && e.event === 'message.received' && e.payload.text === `burst ${last}`, 15_000, `burst ${last} after restart`);

    // which bursts the gateway has: streamed before the kill, or stored (decrypted text) by either daemon
    const arrived = async () => {
      const numbers = new Set(oldEvents.all((e) => e.session === 'gw' && e.event === 'message.received').map((e) => burstNumber(e.payload.text)));
      const stored = await readDaemonDb(target.dataDir, (db) =>
        db.prepare<{ id: string; text: string }>("SELECT id, text FROM messages WHERE session = 'gw' AND from_me = 0 AND text LIKE 'burst %'").all(),
      );
      for (const row of stored) {
        assert.equal(burstIds.get(row.id), burstNumber(row.text), `stored text of ${row.id}`);
        numbers.add(burstNumber(row.text));
      }
      return numbers;
    };
    // 1. no gap before the kill: every burst up to the last one streamed before it
    const lastBeforeKill = Math.max(...oldEvents.all((e) => e.session === 'gw' && e.event === 'message.received').map((e) => burstNumber(e.payload.text) ?? 0));
    // 2. every burst the emulator delivered after the kill (offline queue or live on the new connection) decrypts;
    //    only stanzas written to the dying connection may be lost, since the emulator does not redeliver unacked ones
    const afterKill = target.emu.control
      .stanzas({ direction: 'out', device, tag: 'message' })
      .filter((s) => !oldConnections.has(s.connectionId) && burstIds.has(s.node.attrs.id ?? ''))
      .map((s) => burstIds.get(s.node.attrs.id!)!);
    assert.ok(afterKill.length > 0, 'some bursts were queued while the daemon was down');
    const queued = target.emu.control.stanzas({ direction: 'out', device, tag: 'message' }).filter((s) => s.node.attrs.offline === '1' && burstIds.has(s.node.attrs.id ?? ''));
    assert.ok(queued.length > 0, 'the offline queue was used');
    const sentNumbers = new Set(burstIds.values());
    const expected = [...new Set([...Array.from({ length: lastBeforeKill }, (_, i) => i + 1).filter((k) => sentNumbers.has(k)), ...afterKill])].sort((a, b) => a - b);
    const missing = await waitFor(async () => {
      const have = await arrived();
      const gaps = expected.filter((k) => !have.has(k));
      return gaps.length === 0 ? [] : undefined;
    }, 10_000, 'every burst before the kill and after it to be stored').catch(async () => {
      const have = await arrived();
      return expected.filter((k) => !have.has(k));
    });
    assert.deepEqual(missing, [], `bursts missing at the gateway (sent 1..${n}, streamed up to ${lastBeforeKill} before the kill; send errors: ${sendErrors.join('; ') || 'none'})`);
    // 3. the gateway never asked the contact to re-send (a retry receipt means it could not decrypt: lost keys)
    const retries = target.emu.control.stanzas({ direction: 'in', device, tag: 'receipt' }).filter((s) => s.node.attrs.type === 'retry');
    assert.deepEqual(retries.map((s) => s.node.attrs.id), [], 'retry receipts from the gateway');
    await roundTrip('after');
    assert.deepEqual(target.emu.control.phoneFailures(), []);
  });

  const reconnecting: Array<[CloseCode, CloseKind | undefined, string]> = [
    [408, undefined, 'AUTO_RECONNECT'],
    [428, 'socket', 'AUTO_RECONNECT'],
    [503, undefined, 'AUTO_RECONNECT'],
    [500, undefined, 'STREAM_ERROR'],
  ];
  for (const [code, kind, reason] of reconnecting) {
    it(`close ${code}${kind ? ` (${kind})` : ''} → ${reason}, then CONNECTED again by itself`, async () => {
      const since = events.events.length;
      assert.equal(target.emu.control.dropConnection(device, code, kind), true);
      await events.next((e) => events.events.indexOf(e) >= since && e.event === 'session.status' && e.payload.statusReason === reason, 10_000, reason);
      await events.next((e) => events.events.indexOf(e) >= since && e.event === 'session.status' && e.payload.status === 'CONNECTED', 10_000, 'CONNECTED');
      await target.emu.control.waitForOnline(device);
      await roundTrip(`after ${code}`);
    });
  }

  it('close 515 (restart required) → reconnects inside the engine; the status never leaves CONNECTED', async () => {
    const since = events.events.length;
    assert.equal(target.emu.control.dropConnection(device, 515), true);
    await events.next((e) => events.events.indexOf(e) >= since && e.event === 'session.connected', 10_000, 'session.connected again');
    await roundTrip('after 515');
    assert.deepEqual(events.events.slice(since).filter((e) => e.session === 'gw' && e.event === 'session.status'), []);
  });

  const terminal: Array<[CloseCode, CloseKind | undefined, string]> = [
    [440, undefined, 'FAILED'],
    [403, undefined, 'TEMPORARY_BAN'],
  ];
  for (const [code, kind, reason] of terminal) {
    it(`close ${code} → DISCONNECTED/${reason}, no reconnect; a start brings it back`, async () => {
      const since = events.events.length;
      assert.equal(target.emu.control.dropConnection(device, code, kind), true);
      await events.next((e) => events.events.indexOf(e) >= since && e.event === 'session.status' && e.payload.statusReason === reason, 10_000, reason);
      const view = await status();
      assert.equal(view.status, 'DISCONNECTED');
      await new Promise((r) => setTimeout(r, 300)); // longer than the reconnect delay: nothing happens by itself
      assert.equal((await status()).status, 'DISCONNECTED');
      assert.equal(target.emu.control.isOnline(device), false);
      assert.equal((await target.daemon.request('POST', '/api/sessions/gw/start')).status, 200);
      await waitFor(async () => (await status()).status === 'CONNECTED', 10_000, 'CONNECTED after start');
      await target.emu.control.waitForOnline(device);
      await roundTrip(`after ${code}`);
    });
  }

  it('delete erases the session\'s credentials and keys (auth_state), leaving other sessions\' alone', async () => {
    const OTHER = '15550203003';
    await target.pairedSession('doomed', OTHER, 'Doomed');
    const doomedDevice = target.emu.control.devices(OTHER)[0]!.jid;
    await target.emu.control.waitForOnline(doomedDevice);
    // a message each way, so Signal sessions are stored too, not only creds and prekeys
    await target.emu.control.send(CONTACT, jid(OTHER), 'to doomed');
    await events.next((e) => e.session === 'doomed' && e.event === 'message.received' && e.payload.text === 'to doomed', 10_000, 'text at doomed');
    const out = await target.daemon.request('POST', '/api/messages/send', { session: 'doomed', chatId: jid(CONTACT), type: 'text', text: 'from doomed' });
    assert.equal(out.status, 200, JSON.stringify(out.body));
    await target.emu.control.waitForInbox(CONTACT, (m) => m.text === 'from doomed', 10_000);
    const keys = (await readDaemonDb(target.dataDir, (db) => db.prepare("SELECT key FROM auth_state WHERE session = 'doomed'").pluck().all())) as string[];
    assert.ok(keys.includes('baileys:creds') && keys.some((k) => k.startsWith('baileys:session:')), `stored before delete: ${keys.join(', ')}`);
    const gwRows = await countAuthState(target.dataDir, 'gw');
    assert.ok(gwRows > 0);

    assert.equal((await target.daemon.request('DELETE', '/api/sessions/doomed')).status, 200);
    assert.equal((await target.daemon.request('GET', '/api/sessions/doomed')).status, 404);
    assert.equal(await countAuthState(target.dataDir, 'doomed'), 0, 'auth_state rows left for the deleted session');
    await waitFor(() => !target.emu.control.isOnline(doomedDevice), 5_000, 'the deleted session\'s socket to close');
    // nothing writes them back once the socket is gone, and the other session keeps its own
    await roundTrip('after delete');
    assert.equal(await countAuthState(target.dataDir, 'doomed'), 0, 'auth_state rows written back after delete');
    assert.ok((await countAuthState(target.dataDir, 'gw')) > 0);
  });

  it('unlinked on the phone (401) → DISCONNECTED/LOGGED_OUT, credentials cleared, session.logged_out', async () => {
    const since = events.events.length;
    target.emu.control.unlink(device);
    const out = await events.next((e) => events.events.indexOf(e) >= since && e.event === 'session.logged_out', 10_000, 'session.logged_out');
    assert.equal(out.payload.reason, 'UNLINKED');
    const view = await status();
    assert.equal(view.status, 'DISCONNECTED');
    assert.equal(view.statusReason, 'LOGGED_OUT');
    assert.equal(view.phoneNumber, undefined);
    // starting again asks for a new pairing
    assert.equal((await target.daemon.request('POST', '/api/sessions/gw/start')).status, 200);
    await waitFor(async () => (await target.daemon.request('GET', '/api/sessions/gw/pairing/qr')).status === 200, 10_000, 'a new QR');
    assert.equal((await status()).statusReason, 'SCAN_QR');
  });
});

describe('baileys: close codes that cannot be injected', () => {
  const paired = { stopping: false, paired: true };
  it('maps the rest of the table', () => {
    const reason = (code: number | undefined, ctx = paired, message?: string) => {
      const action = classifyClose(code, { ...ctx, ...(message ? { message } : {}) });
      return action.kind === 'report' ? action.report.reason : action.kind;
    };
    assert.equal(reason(DisconnectReason.multideviceMismatch), 'FAILED');
    assert.equal(reason(DisconnectReason.restartRequired), 'restart');
    assert.equal(reason(undefined), 'ignore');
    assert.equal(reason(DisconnectReason.connectionClosed, { stopping: true, paired: true }), 'ignore');
    assert.equal(reason(DisconnectReason.timedOut, { stopping: false, paired: false }, 'QR refs attempts ended'), 'QR_TIMEOUT');
    assert.equal(reason(DisconnectReason.timedOut, { stopping: false, paired: false }, 'connect ECONNREFUSED 127.0.0.1:1'), 'AUTO_RECONNECT');
    assert.equal(reason(402), 'TEMPORARY_BAN');
    assert.equal(reason(405), 'FAILED');
    assert.equal(reason(599), 'STREAM_ERROR');
    const loggedOut = classifyClose(DisconnectReason.loggedOut, paired);
    assert.ok(loggedOut.kind === 'report' && loggedOut.report.credentialsCleared);
    const cause = (code: number, ctx: Parameters<typeof classifyClose>[1]) => {
      const action = classifyClose(code, ctx);
      return action.kind === 'report' ? `${action.report.reason} ${action.report.cause?.code}` : action.kind;
    };
    // before pairing a 401 is a refused login, not an unlink (no logoutReason follows from it)
    assert.equal(cause(DisconnectReason.loggedOut, { stopping: false, paired: false }), 'LOGGED_OUT LOGIN_REFUSED');
    // a <failure>'s attributes are the error's data: a temporary ban's ban `code` is not a socket error code
    assert.equal(cause(402, { ...paired, error: { data: { reason: '402', code: '101', expire: '86400' } } }), 'TEMPORARY_BAN TEMPORARILY_BANNED');
    // a stream error Baileys has no code for is a key problem only when its reason is <bad-mac/>
    assert.equal(cause(DisconnectReason.badSession, { ...paired, error: { data: { tag: 'bad-mac', attrs: {} } } }), 'FAILED KEY_ERROR');
    assert.equal(cause(DisconnectReason.badSession, { ...paired, error: { data: { tag: 'xml-not-well-formed', attrs: {} } } }), 'STREAM_ERROR STREAM_ERROR');
  });
});
