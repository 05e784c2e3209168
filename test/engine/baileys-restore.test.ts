// Restore of Baileys sessions at start, spread by sessions.restoreRatePerSecond: the emulator never sees more connection
// attempts in a second than the rate allows, sessions waiting their turn show CONNECTING (not the CONNECTED of the last
// run), and one stopped while it waits is not started.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/daemon.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

/** one session every two seconds: generous gaps for a loaded machine */
const RATE = 0.5;
const SESSIONS = ['r0', 'r1', 'r2', 'r3', 'r4'];
const phone = (i: number) => `1555031000${i}`;

describe('baileys: restore at start, spread by sessions.restoreRatePerSecond', () => {
  let target: BaileysTarget;

  before(async () => {
    target = await startBaileysTarget({ config: `sessions:\n  restoreRatePerSecond: ${RATE}\n` });
    for (const [i, name] of SESSIONS.entries()) await pair(name, phone(i));
  });

  const status = async (name: string) => {
    const { status, statusReason } = (await target.daemon.request('GET', `/api/sessions/${name}`)).body.data as { status: string; statusReason: string | null };
    return { status, statusReason };
  };

  /** target.pairedSession with waits for a loaded machine (the restore, not the pairing, is under test) */
  const pair = async (name: string, digits: string) => {
    const created = await target.daemon.request('POST', '/api/sessions', { name, start: true, engine: 'baileys' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const qr = await waitFor(async () => {
      const res = await target.daemon.request('GET', `/api/sessions/${name}/pairing/qr`);
      return res.status === 200 ? (res.body.data.qr as string) : undefined;
    }, 60_000, `${name} QR`);
    await target.scanQr(name, qr, digits);
    await waitFor(async () => (await status(name)).status === 'CONNECTED', 60_000, `${name} CONNECTED`);
  };

  after(async () => {
    await target?.close();
  });

  it('reconnects one session every 1 / restoreRatePerSecond seconds, shows the waiting ones CONNECTING, and skips one stopped while it waits', async () => {
    const since = Date.now();
    const daemon = await target.restartDaemon();
    // r3 and r4 are turns away (6 s, 8 s): still waiting, and not shown as the CONNECTED of the last run
    const stopped = await daemon.request('POST', '/api/sessions/r4/stop');
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    // at once on one daemon; in a cluster (PostgreSQL) once a node has adopted it, which takes its lease first
    await waitFor(async () => isDeepStrictEqual(await status('r3'), { status: 'CONNECTING', statusReason: null }), 3_000, 'r3 shown CONNECTING while it waits');

    const restored = SESSIONS.slice(0, 4);
    await waitFor(async () => (await Promise.all(restored.map(status))).every((s) => s.status === 'CONNECTED'), 60_000, 'r0–r3 CONNECTED');
    const stats = target.emu.control.stats(since);
    assert.equal(stats.connectionAttempts, restored.length);
    // two seconds apart: one attempt in any second (four at once without the spreading); two only if this process or
    // the daemon stalled for a second between them, which a loaded machine can do
    assert.ok(stats.peakAttemptsPerSecond <= 2, `peak ${stats.peakAttemptsPerSecond}/s`);

    // r4's turn came and went: it stays stopped, and the emulator never saw it
    await new Promise((r) => setTimeout(r, 3_000));
    assert.deepEqual(await status('r4'), { status: 'DISCONNECTED', statusReason: 'MANUAL_STOP' });
    const r4 = target.emu.control.devices(phone(4))[0]!.jid;
    assert.equal(target.emu.control.isOnline(r4), false);
    assert.equal(target.emu.control.stats(since).connectionAttempts, restored.length);
  });
});
