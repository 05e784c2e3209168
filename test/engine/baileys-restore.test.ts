// Restore of Baileys sessions at start, spread by sessions.restoreRatePerSecond: the emulator never sees more connection
// attempts in a second than the rate allows, sessions waiting their turn show CONNECTING (not the CONNECTED of the last
// run), and one stopped while it waits is not started.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../helpers/daemon.js';
import { startBaileysTarget, type BaileysTarget } from './targets.js';

const RATE = 1;
const SESSIONS = ['r0', 'r1', 'r2', 'r3', 'r4'];
const phone = (i: number) => `1555031000${i}`;

describe('baileys: restore at start, spread by sessions.restoreRatePerSecond', () => {
  let target: BaileysTarget;

  before(async () => {
    target = await startBaileysTarget({ config: `sessions:\n  restoreRatePerSecond: ${RATE}\n` });
    for (const [i, name] of SESSIONS.entries()) await target.pairedSession(name, phone(i));
  });

  after(async () => {
    await target?.close();
  });

  const status = async (name: string) => {
    const { status, statusReason } = (await target.daemon.request('GET', `/api/sessions/${name}`)).body.data as { status: string; statusReason: string | null };
    return { status, statusReason };
  };

  it(`reconnects at most ${RATE} session a second, shows the waiting ones CONNECTING, and skips one stopped while it waits`, async () => {
    const since = Date.now();
    const daemon = await target.restartDaemon();
    const listening = Date.now();
    // the last two are RATE-spaced turns away: still waiting, and not shown as the CONNECTED of the last run
    const stopped = await daemon.request('POST', '/api/sessions/r4/stop');
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.deepEqual(await status('r3'), { status: 'CONNECTING', statusReason: null });

    const restored = SESSIONS.slice(0, 4);
    await waitFor(async () => (await Promise.all(restored.map(status))).every((s) => s.status === 'CONNECTED'), 30_000, 'r0–r3 CONNECTED');
    const tookMs = Date.now() - listening;
    // four sessions, one a second: the last one starts at least three seconds after the first
    assert.ok(tookMs >= 2_900, `restored in ${tookMs} ms`);
    const stats = target.emu.control.stats(since);
    assert.equal(stats.connectionAttempts, restored.length);
    // timers and loopback may bring two evenly spaced attempts a little closer than 1 s apart, never three
    assert.ok(stats.peakAttemptsPerSecond <= RATE + 1, `peak ${stats.peakAttemptsPerSecond}/s`);

    // r4's turn came and went: it stays stopped, and the emulator never saw it
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(await status('r4'), { status: 'DISCONNECTED', statusReason: 'MANUAL_STOP' });
    const r4 = target.emu.control.devices(phone(4))[0]!.jid;
    assert.equal(target.emu.control.isOnline(r4), false);
    assert.equal(target.emu.control.stats(since).connectionAttempts, restored.length);
  });
});
