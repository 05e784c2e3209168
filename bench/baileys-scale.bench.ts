// Real Baileys sessions at scale: a daemon on the Baileys engine pairs N sessions with the WhatsApp Web emulator (in its
// own process: real Noise, Signal keys, pre-keys uploaded, QR scanned by the emulator's virtual phones), then measures
// RSS per connected session against the empty daemon, the restore of all N after a restart (and the peak connection
// attempts per second the emulator saw), inbound messages/s from emulator peers to a webhook receiver (with the CPU
// share of Signal decryption, from a --cpu-prof of the daemon), and sends/s until the emulator's phones decrypted them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import PQueue from 'p-queue';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { freePort, startDaemon, waitFor, type TestDaemon } from '../test/helpers/daemon.js';
import type { EmulatorStats } from '../test/support/wa-emulator/stats.js';
import type { BenchResult } from './types.js';
import { cpuMicros } from './support/cpu.js';
import { startChild } from './support/process.js';
import { result, round } from './support/report.js';

const COUNT = Number(process.env.BENCH_BAILEYS_SESSIONS ?? 200);
/** sessions paired at once (each pairing generates and uploads 812 pre-keys) */
const PAIRING_CONCURRENCY = Number(process.env.BENCH_BAILEYS_PAIRING_CONCURRENCY ?? 4);
/** pairings tried again (session deleted and created anew) when one failed, e.g. its answer came after the emulator's wait */
const PAIRING_ATTEMPTS = 3;
/** contacts (emulator phones) that write to the gateway's sessions and receive its sends */
const PEERS = 10;
/** messages per session in the inbound and the send phase */
const MESSAGES_PER_SESSION = Number(process.env.BENCH_BAILEYS_MESSAGES ?? 5);
/** requests in flight in the inbound (emulator control) and send (daemon API) phases */
const IN_FLIGHT = 16;
/** sessions.restoreRatePerSecond of the measured restore (the default) */
const RESTORE_RATE = DEFAULT_CONFIG.sessions.restoreRatePerSecond;
const SERVE = fileURLToPath(new URL('../test/support/wa-emulator/serve.js', import.meta.url));
const PROFILER = new URL('./support/cpu-profile-preload.js', import.meta.url).href;

const gatewayPhone = (i: number) => `1555300${String(i).padStart(4, '0')}`;
const peerPhone = (i: number) => `1555400${String(i % PEERS).padStart(4, '0')}`;
const jid = (phone: string) => `${phone}@s.whatsapp.net`;
const log = (line: string) => process.stdout.write(`  ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** CLOCK_MONOTONIC in µs: the clock of V8's CPU profiles on Linux */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

interface Emulator {
  process: ChildProcess;
  wsUrl: string;
  mediaHost: string;
  env: Record<string, string>;
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  stats(since?: number): Promise<EmulatorStats>;
  stop(): Promise<void>;
}

/** The emulator in its own process (serve.js), so its CPU is measured apart from the daemon's. */
async function startEmulatorProcess(trustDir: string): Promise<Emulator> {
  // a daemon pairing several clients at once on a loaded machine may answer pair-success after the default 10 s
  const child = spawn(process.execPath, [SERVE, trustDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WA_EMULATOR_QUERY_TIMEOUT_MS: '60000' } });
  const lines = createInterface({ input: child.stdout! });
  // libsignal (the virtual phones) reports re-keyed sessions on the console: noise; anything else is shown
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!/^(Closing|Opening|Removing old closed) (open )?session/.test(line)) process.stderr.write(`emulator: ${line}\n`);
  });
  const info = await new Promise<{ wsUrl: string; controlUrl: string; mediaHost: string; daemonEnv: Record<string, string> }>((done, fail) => {
    lines.once('line', (line) => done(JSON.parse(line)));
    child.once('exit', (code) => fail(new Error(`the emulator exited with ${code}`)));
  });
  // libsignal prints session records with console.log: read and drop
  lines.on('line', () => undefined);
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${info.controlUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const answer = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(`emulator ${method} ${path}: ${res.status} ${answer.error}`);
    return answer;
  };
  return {
    process: child,
    wsUrl: info.wsUrl,
    mediaHost: info.mediaHost,
    env: info.daemonEnv,
    api,
    stats: (since) => api<EmulatorStats>('GET', `/control/stats${since ? `?since=${since}` : ''}`),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** Runs `task(i)` for i in [0, count) with at most `limit` at once. */
async function pool(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  const queue = new PQueue({ concurrency: limit });
  await Promise.all(Array.from({ length: count }, (_, i) => queue.add(() => task(i))));
}

/**
 * daemon.request, tried again when the connection failed: on a machine this loaded a keep-alive socket is now and then
 * reset just as it is reused. Only for requests that may be repeated (a repeated send is counted by the emulator too).
 */
async function request(daemon: TestDaemon, method: string, path: string, body?: unknown) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await daemon.request(method, path, body);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof TypeError)) throw err;
      await sleep(200);
    }
  }
}

/** Five RSS readings 300 ms apart; their median. */
async function settledRss(daemon: TestDaemon): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    await sleep(300);
    samples.push(await metric(daemon, 'gateway_process_resident_memory_bytes'));
  }
  return samples.sort((a, b) => a - b)[2]!;
}

async function metric(daemon: TestDaemon, name: string): Promise<number> {
  const text = (await request(daemon, 'GET', '/metrics')).body as string;
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
}

const openFiles = (pid: number | undefined) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};

/** Creates session b<i>, waits for its QR, has the emulator's phone scan it, and waits until it is CONNECTED. */
async function pair(daemon: TestDaemon, emu: Emulator, i: number): Promise<void> {
  const name = `b${i}`;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const created = await request(daemon, 'POST', '/api/sessions', { name, start: true });
      if (created.status !== 201 && created.body?.error?.code !== 'SESSION_EXISTS') throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
      const qr = await waitFor(async () => {
        const res = await request(daemon, 'GET', `/api/sessions/${name}/pairing/qr`);
        return res.status === 200 ? (res.body.data.qr as string) : (await sleep(100), undefined);
      }, 60_000, `${name} QR`);
      // the phone's account is created by its first scan
      await emu.api('POST', '/control/scan', { qr, phone: gatewayPhone(i) });
      await waitFor(async () => (await request(daemon, 'GET', `/api/sessions/${name}`)).body.data.status === 'CONNECTED' || (await sleep(100), false), 60_000, `${name} CONNECTED`);
      return;
    } catch (err) {
      if (attempt >= PAIRING_ATTEMPTS) throw err;
      log(`pairing ${name} failed (${(err as Error).message.split('\n')[0]}); again`);
      await request(daemon, 'DELETE', `/api/sessions/${name}`);
    }
  }
}

/** Polls until the daemon reports `count` sessions CONNECTED; ms from `since` (performance.now()). */
async function untilConnected(daemon: TestDaemon, count: number, since: number, timeoutMs: number): Promise<number> {
  await waitFor(async () => ((await request(daemon, 'GET', '/api/health')).body.data.sessions.connected as number) >= count || (await sleep(20), false), timeoutMs, `${count} sessions CONNECTED`);
  return performance.now() - since;
}

interface Phase {
  /** messages per second */
  rate: number;
  seconds: number;
  daemonCpuUs: number;
  emulatorCpuUs: number;
  /** CLOCK_MONOTONIC µs, for the CPU profile */
  fromUs: number;
  toUs: number;
}

/** Runs `start` with `count` messages and waits until `arrived()` reached `target`; CPU of both processes over it. */
async function phase(daemon: TestDaemon, emu: Emulator, count: number, start: (i: number) => Promise<void>, arrived: () => Promise<number>, target: number): Promise<Phase> {
  const cpu = () => [cpuMicros(daemon.child.pid) ?? 0, cpuMicros(emu.process.pid) ?? 0] as const;
  const [daemonBefore, emuBefore] = cpu();
  const fromUs = monotonicUs();
  const started = performance.now();
  const sending = pool(count, IN_FLIGHT, start);
  await waitFor(async () => (await arrived()) >= target || (await sleep(50), false), 120_000 + count * 100, `${target} arrivals`);
  await sending;
  const seconds = (performance.now() - started) / 1000;
  const toUs = monotonicUs();
  const [daemonAfter, emuAfter] = cpu();
  return { rate: count / seconds, seconds, daemonCpuUs: daemonAfter - daemonBefore, emulatorCpuUs: emuAfter - emuBefore, fromUs, toUs };
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Shares of the daemon's busy samples (all but idle) taken within [fromUs, toUs]: those whose own function is
 * libsignal's or curve25519-js's (self time), and those with a libsignal frame anywhere on the stack (their calls into
 * Node's crypto included); plus the functions with the most self samples, for the text report. Samples are counted,
 * not weighted by the time between them: on a loaded machine that time includes the time the process waited for a core.
 */
function signalShare(profile: CpuProfile, fromUs: number, toUs: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const isSignal = (url: string) => /\/(libsignal|curve25519-js)\//.test(url);
  const underSignal = new Map<number, boolean>();
  const inside = (id: number): boolean => {
    let known = underSignal.get(id);
    if (known === undefined) {
      const up = parent.get(id);
      known = isSignal(byId.get(id)!.callFrame.url) || (up !== undefined && inside(up));
      underSignal.set(id, known);
    }
    return known;
  };
  let t = profile.startTime;
  let busy = 0;
  let self = 0;
  let inclusive = 0;
  const selfByFunction = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i += 1) {
    t += profile.timeDeltas[i]!;
    if (t < fromUs || t > toUs) continue;
    const node = byId.get(profile.samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    busy += 1;
    if (isSignal(node.callFrame.url)) self += 1;
    if (inside(node.id)) inclusive += 1;
    const key = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}`;
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + 1);
  }
  const top = [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, 12);
  return { busySamples: busy, selfShare: busy ? self / busy : 0, inclusiveShare: busy ? inclusive / busy : 0, top };
}

export async function run(): Promise<BenchResult[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-baileys-scale-'));
  const profileFile = join(dataDir, 'daemon.cpuprofile');
  const emu = await startEmulatorProcess(dataDir);
  const receiver = await startChild('./receiver.js');
  const port = await freePort();
  const env: Record<string, string> = {
    ...emu.env,
    GATEWAY_BAILEYS_WS_URL: emu.wsUrl,
    GATEWAY_BAILEYS_MEDIA_HOSTS: emu.mediaHost,
    GATEWAY_DEFAULT_ENGINE: 'baileys',
    GATEWAY_LOG_LEVEL: 'warn',
  };
  const boot = (profile?: string) =>
    startDaemon({ dataDir, port, listenTimeoutMs: 120_000, env: profile ? { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS} --import ${PROFILER}`, BENCH_CPU_PROFILE: profile } : env });
  let daemon: TestDaemon | undefined;
  try {
    // 1. the empty daemon, then N sessions paired in it
    daemon = await boot();
    const emptyRss = await settledRss(daemon);
    const cpu = () => [cpuMicros(daemon!.child.pid) ?? 0, cpuMicros(emu.process.pid) ?? 0] as const;
    const pairingCpu = cpu();
    const pairingStarted = performance.now();
    let paired = 0;
    await pool(COUNT, PAIRING_CONCURRENCY, async (i) => {
      await pair(daemon!, emu, i);
      paired += 1;
      if (paired % 50 === 0) log(`${paired} paired, ${round((performance.now() - pairingStarted) / 1000)} s`);
    });
    const pairingSeconds = (performance.now() - pairingStarted) / 1000;
    const [daemonPairingCpu, emuPairingCpu] = cpu().map((us, i) => (us - pairingCpu[i]!) / 1e6);
    await waitFor(async () => (await emu.stats()).devicesActive >= COUNT || (await sleep(100), false), 60_000, `${COUNT} devices active at the emulator`);
    // prom-client resets its event-loop histogram at every scrape: read it before the RSS readings scrape again
    const pairingLagMax = await metric(daemon, 'gateway_nodejs_eventloop_lag_max_seconds');
    const pairedRss = await settledRss(daemon);
    log(`paired ${COUNT} in ${round(pairingSeconds)} s (CPU: daemon ${round(daemonPairingCpu!)} s, emulator ${round(emuPairingCpu!)} s; daemon event-loop lag max since the last scrape ${round(pairingLagMax * 1000)} ms); RSS ${round(emptyRss / 2 ** 20)} MB empty, ${round(pairedRss / 2 ** 20)} MB with ${COUNT} connected`);
    await daemon.stop();

    // 2. restarts: the time until all N are CONNECTED again, and the connection attempts the emulator saw meanwhile;
    // first with every session reconnecting at once (restoreRatePerSecond 0, the baseline), then at the default rate
    const restart = async (config: string) => {
      const since = Date.now();
      const spawned = performance.now();
      const emuCpuBefore = cpuMicros(emu.process.pid) ?? 0;
      daemon = await startDaemon({ dataDir, port, listenTimeoutMs: 120_000, env, config });
      const listening = performance.now();
      const cpuAtListening = cpuMicros(daemon.child.pid) ?? 0;
      const fromSpawnMs = await untilConnected(daemon, COUNT, spawned, 120_000);
      const daemonCpuUs = (cpuMicros(daemon.child.pid) ?? 0) - cpuAtListening;
      const emulatorCpuUs = (cpuMicros(emu.process.pid) ?? 0) - emuCpuBefore;
      await waitFor(async () => (await emu.stats()).devicesActive >= COUNT || (await sleep(100), false), 60_000, `${COUNT} devices active again`);
      const stats = await emu.stats(since);
      const fromListeningMs = fromSpawnMs - (listening - spawned);
      log(
        `restored ${COUNT} (${config.trim().replace(/\s+/g, ' ')}) in ${round(fromSpawnMs)} ms from spawn, ${round(fromListeningMs)} ms from listening; ` +
          `${stats.connectionAttempts} connection attempts, peak ${stats.peakAttemptsPerSecond}/s; CPU from listening: daemon ${round(daemonCpuUs / 1000)} ms, emulator ${round(emulatorCpuUs / 1000)} ms (from spawn)`,
      );
      return { fromSpawnMs, fromListeningMs, peak: stats.peakAttemptsPerSecond, attempts: stats.connectionAttempts, daemonCpuUs };
    };
    const storm = await restart('sessions:\n  restoreRatePerSecond: 0\n');
    await daemon!.stop();
    const restore = await restart(`sessions:\n  restoreRatePerSecond: ${RESTORE_RATE}\n`);
    const lag = await metric(daemon!, 'gateway_nodejs_eventloop_lag_max_seconds');
    const restoredRss = await settledRss(daemon!);
    const heapUsed = await metric(daemon!, 'gateway_nodejs_heap_size_used_bytes');
    const files = { daemon: openFiles(daemon!.child.pid), emulator: openFiles(emu.process.pid) };
    log(`RSS ${round(restoredRss / 2 ** 20)} MB, heap ${round(heapUsed / 2 ** 20)} MB; event-loop lag max since the last scrape ${round(lag * 1000)} ms; open files: daemon ${files.daemon}, emulator ${files.emulator}`);
    await daemon!.stop();

    // 3. the same daemon with a CPU profile: inbound from emulator peers to a webhook, then sends to them
    daemon = await boot(profileFile);
    // the restarts above wrote a gateway.yaml; this daemon reads the last one (the default rate)
    await untilConnected(daemon, COUNT, performance.now(), 120_000);
    await waitFor(async () => (await emu.stats()).devicesActive >= COUNT || (await sleep(100), false), 60_000, `${COUNT} devices active (profiled daemon)`);
    for (let p = 0; p < PEERS; p += 1) await emu.api('POST', '/control/accounts', { phone: peerPhone(p), pushName: `Peer ${p}` });
    const hook = await request(daemon, 'POST', '/api/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['message.received'] });
    if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
    const received = async () => ((await (await fetch(`http://127.0.0.1:${receiver.port}/count`)).json()) as { received: number }).received;
    const fromPeer = async (i: number, label: string) => {
      await emu.api('POST', '/control/send', { from: peerPhone(i), to: gatewayPhone(i % COUNT), text: `${label} ${i}` });
    };
    // warm-up: one message per session opens its Signal session with its peer (a pkmsg); then the measured run
    await phase(daemon, emu, COUNT, (i) => fromPeer(i, 'hello'), received, COUNT);
    const inboundCount = COUNT * MESSAGES_PER_SESSION;
    const inbound = await phase(daemon, emu, inboundCount, (i) => fromPeer(i, 'in'), received, COUNT + inboundCount);
    log(`inbound: ${inboundCount} in ${round(inbound.seconds)} s; CPU daemon ${round(inbound.daemonCpuUs / 1e6)} s, emulator ${round(inbound.emulatorCpuUs / 1e6)} s`);

    const phoneMessages = async () => (await emu.stats()).phoneMessages;
    const toPeer = async (i: number, label: string) => {
      const res = await request(daemon!, 'POST', '/api/messages/send', { session: `b${i % COUNT}`, chatId: jid(peerPhone(i)), type: 'text', text: `${label} ${i}` });
      if (res.status !== 200) throw new Error(`send b${i % COUNT}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    await phase(daemon, emu, COUNT, (i) => toPeer(i, 'warm'), phoneMessages, (await phoneMessages()) + COUNT);
    const sendCount = COUNT * MESSAGES_PER_SESSION;
    const sends = await phase(daemon, emu, sendCount, (i) => toPeer(i, 'out'), phoneMessages, (await phoneMessages()) + sendCount);
    log(`sends: ${sendCount} in ${round(sends.seconds)} s; CPU daemon ${round(sends.daemonCpuUs / 1e6)} s, emulator ${round(sends.emulatorCpuUs / 1e6)} s`);
    await daemon.stop();
    const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
    const inboundCpu = signalShare(profile, inbound.fromUs, inbound.toUs);
    const sendCpu = signalShare(profile, sends.fromUs, sends.toUs);
    for (const [label, shares] of [['inbound', inboundCpu], ['sends', sendCpu]] as const) {
      log(`${label}: the daemon's self samples by function (of ${shares.busySamples} busy samples in the window):`);
      for (const [name, n] of shares.top) log(`  ${round((100 * n) / shares.busySamples)}%  ${name}`);
    }

    const mb = (bytes: number) => bytes / 2 ** 20;
    const perSessionMb = (rss: number) => mb(rss - emptyRss) / COUNT;
    return [
      result('baileys-scale', `RSS per connected Baileys session, MB: (daemon with ${COUNT} restored and CONNECTED − empty daemon) ÷ ${COUNT} (vs the 3 MB target)`, perSessionMb(restoredRss), 3, 'MB'),
      result('baileys-scale', `RSS per connected Baileys session, MB, in the daemon that paired them (vs the restored daemon's)`, perSessionMb(pairedRss), perSessionMb(restoredRss), 'MB'),
      result('baileys-scale', `RSS of the daemon with ${COUNT} Baileys sessions CONNECTED vs the empty daemon, MB`, mb(restoredRss), mb(emptyRss), 'MB'),
      result('baileys-scale', `daemon start to ${COUNT} Baileys sessions CONNECTED after a restart, ms (incl. process start; restoreRatePerSecond ${RESTORE_RATE}; vs the 20 s target)`, restore.fromSpawnMs, 20_000, 'ms'),
      result('baileys-scale', `the same, from the daemon listening to all CONNECTED, ms (vs every session at once, restoreRatePerSecond 0, same run)`, restore.fromListeningMs, storm.fromListeningMs, 'ms'),
      result('baileys-scale', `daemon CPU ms per session restored, from listening to all CONNECTED (restoreRatePerSecond ${RESTORE_RATE} vs 0)`, restore.daemonCpuUs / COUNT / 1000, storm.daemonCpuUs / COUNT / 1000, 'ms'),
      result('baileys-scale', `peak connection attempts per second at the emulator during that restore (any 1 s window; vs every session at once)`, restore.peak, storm.peak, '/s'),
      result('baileys-scale', `inbound messages/s, emulator peers → Baileys → webhook receiver (${inboundCount} messages, ${IN_FLIGHT} sends in flight; vs the emulator's CPU-bound ceiling: messages ÷ emulator CPU s)`, inbound.rate, inboundCount / (inbound.emulatorCpuUs / 1e6), 'msg/s'),
      result('baileys-scale', 'daemon CPU µs per inbound message (vs the emulator\'s, which encrypts it)', inbound.daemonCpuUs / inboundCount, inbound.emulatorCpuUs / inboundCount, 'µs'),
      result('baileys-scale', 'share of the daemon\'s busy CPU in Signal decryption during the inbound run: self time of libsignal + curve25519-js (vs with their calls into Node crypto)', inboundCpu.selfShare * 100, inboundCpu.inclusiveShare * 100, '%'),
      result('baileys-scale', `sends/s through Baileys, POST /api/messages/send until the emulator's phones decrypted them (${sendCount} sends, ${IN_FLIGHT} in flight; vs messages ÷ emulator CPU s)`, sends.rate, sendCount / (sends.emulatorCpuUs / 1e6), 'msg/s'),
      result('baileys-scale', 'daemon CPU µs per send (vs the emulator\'s, which decrypts it)', sends.daemonCpuUs / sendCount, sends.emulatorCpuUs / sendCount, 'µs'),
      result('baileys-scale', 'share of the daemon\'s busy CPU in Signal encryption during the sends: self time of libsignal + curve25519-js (vs with their calls into Node crypto)', sendCpu.selfShare * 100, sendCpu.inclusiveShare * 100, '%'),
      result('baileys-scale', `context: seconds to pair ${COUNT} sessions by QR, ${PAIRING_CONCURRENCY} at a time (vs per session)`, pairingSeconds, (pairingSeconds * PAIRING_CONCURRENCY) / COUNT, 's'),
      result('baileys-scale', `context: open files of the daemon with ${COUNT} sessions (vs the emulator's)`, files.daemon, files.emulator, ''),
    ];
  } catch (err) {
    if (daemon) process.stderr.write(`daemon exit ${daemon.child.exitCode ?? daemon.child.signalCode}; its last output:\n${daemon.output().slice(-4000)}\n`);
    throw err;
  } finally {
    await daemon?.cleanup();
    await receiver.stop();
    await emu.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
