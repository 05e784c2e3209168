// The health watchdog's steps, driven with fake timers: silence → probe (answered: recovered), probe unanswered →
// soft reconnect (frames back: recovered), reconnect that does not help → restart (recovered), and a stop mid-way.
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { Watchdog, type Connection, type HealthReport } from '../../src/sessions/watchdog.js';

const SETTINGS = { silenceMs: 10_000, probeTimeoutMs: 2_000, recoverMs: 5_000 };

/** A connection whose server answers (`deaf` false) or not; a frame arrives with each answer. */
class FakeConnection implements Connection {
  lastFrame = Date.now();
  reconnects = 0;
  constructor(
    public deaf: boolean,
    /** whether a soft reconnect brings the frames back */
    private readonly reconnectHelps: boolean,
  ) {}
  lastFrameAt(): number | undefined {
    return this.lastFrame;
  }
  probe(): Promise<void> {
    if (this.deaf) return new Promise(() => {});
    this.lastFrame = Date.now();
    return Promise.resolve();
  }
  async reconnect(): Promise<void> {
    this.reconnects += 1;
    this.lastFrame = Date.now();
    if (this.reconnectHelps) this.deaf = false;
  }
}

interface Harness {
  watchdog: Watchdog;
  reports: HealthReport[];
  /** the connection the session has now (a restart replaces it) */
  current(): FakeConnection | undefined;
  restarts(): number;
}

/** A session on `connection`; its restart disconnects it, and it comes back on a new, answering connection a second later. */
function watched(connection: FakeConnection): Harness {
  let current: FakeConnection | undefined = connection;
  let restarts = 0;
  const reports: HealthReport[] = [];
  const watchdog: Watchdog = new Watchdog(
    {
      connection: () => current,
      restart: async () => {
        restarts += 1;
        current = undefined;
        setTimeout(() => {
          current = new FakeConnection(false, true);
          watchdog.connected();
        }, 1_000);
      },
      report: (report) => reports.push(report),
    },
    SETTINGS,
  );
  return { watchdog, reports, current: () => current, restarts: () => restarts };
}

/** Moves the fake clock on, letting the promises the timers settle run (a timer they start waits for the next advance). */
async function advance(ms: number): Promise<void> {
  mock.timers.tick(ms);
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

const steps = (reports: HealthReport[]) => reports.map((r) => `${r.state} ${r.step} ${r.reason}`);

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

test('a silence ends with a probe the server answers: degraded, then recovered by the probe', async () => {
  const connection = new FakeConnection(false, true);
  const { watchdog, reports } = watched(connection);
  watchdog.connected();
  assert.equal(watchdog.health, 'healthy');
  await advance(SETTINGS.silenceMs - 1);
  assert.equal(reports.length, 0, 'no step before the silence reaches its limit');
  await advance(1);
  assert.deepEqual(steps(reports), ['degraded probe silence', 'recovered probe silence']);
  assert.equal(reports[0]!.lastFrameAt, 1_000_000, 'the degraded report names the last frame before the silence');
  assert.equal(watchdog.health, 'healthy');
  assert.equal(connection.reconnects, 0);
});

test('frames keep a session healthy: each frame moves the silence limit', async () => {
  const connection = new FakeConnection(false, true);
  const { watchdog, reports } = watched(connection);
  watchdog.connected();
  for (let i = 0; i < 5; i += 1) {
    await advance(SETTINGS.silenceMs / 2);
    connection.lastFrame = Date.now();
  }
  assert.equal(reports.length, 0);
  assert.equal(watchdog.health, 'healthy');
});

test('an unanswered probe leads to a soft reconnect, which brings the frames back', async () => {
  const connection = new FakeConnection(true, true);
  const { watchdog, reports, restarts } = watched(connection);
  watchdog.connected();
  await advance(SETTINGS.silenceMs);
  assert.deepEqual(steps(reports), ['degraded probe silence']);
  assert.equal(watchdog.health, 'degraded');
  await advance(SETTINGS.probeTimeoutMs);
  assert.deepEqual(steps(reports), ['degraded probe silence', 'degraded reconnect probe_failed', 'recovered reconnect probe_failed']);
  assert.equal(connection.reconnects, 1);
  assert.equal(restarts(), 0);
  assert.equal(watchdog.health, 'healthy');
});

test('a reconnect that does not help leads to a restart; the restarted session answers and recovers', async () => {
  const connection = new FakeConnection(true, false);
  const harness = watched(connection);
  harness.watchdog.connected();
  await advance(SETTINGS.silenceMs);
  await advance(SETTINGS.probeTimeoutMs);
  assert.deepEqual(steps(harness.reports), ['degraded probe silence', 'degraded reconnect probe_failed']);
  // the reconnected connection is as deaf: its probe runs out too
  await advance(SETTINGS.probeTimeoutMs);
  assert.deepEqual(steps(harness.reports).slice(2), ['degraded restart reconnect_failed']);
  assert.equal(harness.restarts(), 1);
  assert.equal(harness.watchdog.health, 'degraded', 'degraded while the restart runs');
  await advance(1_000);
  assert.deepEqual(steps(harness.reports).slice(3), ['recovered restart reconnect_failed']);
  assert.equal(harness.watchdog.health, 'healthy');
  assert.notEqual(harness.current(), connection, 'the restart brought a new connection');
  // the new connection is watched in turn
  await advance(SETTINGS.silenceMs);
  assert.deepEqual(steps(harness.reports).slice(4), ['degraded probe silence', 'recovered probe silence']);
});

test('a restart that does not bring the session back leaves it degraded; frames coming back later recover it', async () => {
  const connection = new FakeConnection(true, false);
  let current: FakeConnection | undefined = connection;
  const reports: HealthReport[] = [];
  const watchdog = new Watchdog(
    {
      connection: () => current,
      restart: async () => {
        current = undefined;
      },
      report: (report) => reports.push(report),
    },
    SETTINGS,
  );
  watchdog.connected();
  for (const ms of [SETTINGS.silenceMs, SETTINGS.probeTimeoutMs, SETTINGS.probeTimeoutMs]) await advance(ms);
  assert.deepEqual(steps(reports), ['degraded probe silence', 'degraded reconnect probe_failed', 'degraded restart reconnect_failed']);
  await advance(SETTINGS.recoverMs);
  assert.equal(reports.length, 3, 'no recovery while the session stays away');
  assert.equal(watchdog.health, 'degraded');
  current = new FakeConnection(false, true);
  watchdog.connected();
  await advance(1);
  assert.equal(watchdog.health, 'degraded', 'CONNECTED again, but no frame has been checked yet');
  await advance(SETTINGS.silenceMs);
  assert.deepEqual(steps(reports).slice(3), ['degraded probe silence', 'recovered probe silence']);
  assert.equal(watchdog.health, 'healthy');
});

test('a stop during the steps ends them: no later step or report', async () => {
  const connection = new FakeConnection(true, false);
  const { watchdog, reports, restarts } = watched(connection);
  watchdog.connected();
  await advance(SETTINGS.silenceMs);
  watchdog.stop();
  assert.equal(watchdog.health, null);
  await advance(SETTINGS.probeTimeoutMs + SETTINGS.recoverMs + SETTINGS.silenceMs);
  assert.deepEqual(steps(reports), ['degraded probe silence']);
  assert.equal(connection.reconnects, 0);
  assert.equal(restarts(), 0);
});

test('an engine between two connections of its own while the session stays CONNECTED is still watched', async () => {
  const connection = new FakeConnection(false, true);
  let between = false;
  const reports: HealthReport[] = [];
  const watchdog = new Watchdog(
    {
      connection: () => ({ lastFrameAt: () => (between ? undefined : connection.lastFrameAt()), probe: () => connection.probe(), reconnect: () => connection.reconnect() }),
      restart: async () => {},
      report: (report) => reports.push(report),
    },
    SETTINGS,
  );
  watchdog.connected();
  between = true;
  await advance(SETTINGS.silenceMs);
  assert.equal(reports.length, 0, 'no frame time to judge by: no step');
  // the engine's new connection opened, then went deaf
  between = false;
  connection.deaf = true;
  await advance(SETTINGS.silenceMs);
  assert.deepEqual(steps(reports), ['degraded probe silence']);
  watchdog.stop();
});

test('a session that leaves CONNECTED outside the steps has no health until it is back', async () => {
  const connection = new FakeConnection(false, true);
  const { watchdog, reports } = watched(connection);
  watchdog.connected();
  watchdog.disconnected();
  assert.equal(watchdog.health, null);
  await advance(SETTINGS.silenceMs * 2);
  assert.equal(reports.length, 0, 'nothing is watched while it is away');
  connection.lastFrame = Date.now();
  watchdog.connected();
  assert.equal(watchdog.health, 'healthy');
});
