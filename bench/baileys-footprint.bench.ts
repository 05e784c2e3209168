// Memory of Baileys sessions: a daemon holding N sessions whose sockets wait on a local endpoint that accepts TCP but never
// answers (so each keeps a live socket, its Noise state, caches and key store), against an empty daemon in the same run.
// The largest consumers come from heap snapshots of both daemons (SIGUSR2), diffed by constructor.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import makeWASocket, { initAuthCreds, makeCacheableSignalKeyStore, makeEventBuffer, MessageRetryManager, type SignalKeyStore } from '@whiskeysockets/baileys';
import { makeLibSignalRepository } from '@whiskeysockets/baileys/lib/Signal/libsignal.js';
import { pino } from 'pino';
import { startDaemon, waitFor, type TestDaemon } from '../test/helpers/daemon.js';
import type { BenchResult } from './types.js';
import { result, round } from './support/report.js';

const COUNT = Number(process.env.BENCH_BAILEYS_SESSIONS ?? 20);
const TOP = 8;
/** instances of each part built in-process: enough that GC noise (tens of KB) is small per instance */
const PARTS = 100;

interface Footprint {
  rss: number;
  heapUsed: number;
  external: number;
  /** self size by "type:constructor" from a heap snapshot */
  byConstructor: Map<string, number>;
}

export async function run(): Promise<BenchResult[]> {
  const blackhole = await silentEndpoint();
  const config = [
    'engine:',
    '  default: baileys',
    '  baileys:',
    `    websocketUrl: ws://127.0.0.1:${blackhole.port}/ws/chat`,
    'sessions:',
    '  reconnectBaseMs: 600000',
    '  reconnectMaxMs: 600000',
    '',
  ].join('\n');
  // both daemons import Baileys before they start: an empty daemon loads it only with its first Baileys session, and its
  // module (about 56 MB) is no part of what a session costs
  const preload = `--import=${import.meta.resolve('@whiskeysockets/baileys')}`;
  const boot = () => startDaemon({ config, env: { GATEWAY_LOG_LEVEL: 'error', GATEWAY_DEFAULT_ENGINE: 'baileys', NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 ${preload}` } });
  let empty: Footprint;
  let loaded: Footprint;
  const bare = await boot();
  try {
    await settle();
    empty = await footprint(bare);
  } finally {
    await bare.cleanup();
  }
  const daemon = await boot();
  try {
    for (let i = 0; i < COUNT; i += 1) {
      const res = await daemon.request('POST', '/api/sessions', { name: `b${i}`, start: true });
      if (res.status !== 201) throw new Error(`create b${i}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    await waitFor(() => blackhole.accepted() >= COUNT, 10_000, `${COUNT} sockets at the endpoint`);
    await settle();
    loaded = await footprint(daemon);
  } finally {
    await daemon.cleanup();
  }

  const per = (a: number, b: number) => (a - b) / COUNT / 1024;
  const heapPerSession = per(loaded.heapUsed, empty.heapUsed);
  const growth = [...loaded.byConstructor]
    .map(([name, size]) => [name, (size - (empty.byConstructor.get(name) ?? 0)) / COUNT] as const)
    .filter(([, size]) => size > 0)
    .sort((a, b) => b[1] - a[1]);
  // named constructors (objects, closures, native buffers) say who holds memory; V8's own categories ((array), (code),
  // (string), shapes) are shown apart: arrays and strings belong to those objects, code is compiled once, not per session
  const consumers = growth.filter(([name]) => !name.includes(':(')).slice(0, TOP);
  const internals = growth.filter(([name]) => name.includes(':(')).slice(0, 5);
  process.stdout.write(`largest heap consumers per Baileys session (self size, heap snapshot diff over ${COUNT} sessions):\n`);
  for (const [name, size] of consumers) process.stdout.write(`  ${name.padEnd(56)} ${round(size / 1024)} KB\n`);
  process.stdout.write('V8 categories:\n');
  for (const [name, size] of internals) process.stdout.write(`  ${name.padEnd(56)} ${round(size / 1024)} KB\n`);

  const parts = await socketParts(blackhole.port).finally(() => blackhole.close());
  process.stdout.write(`parts of one session, built in this process (${PARTS} each, heap + external after GC):\n`);
  for (const [name, kb] of parts) process.stdout.write(`  ${name.padEnd(56)} ${round(kb)} KB\n`);
  const socketKb = parts.find(([name]) => name.startsWith('makeWASocket'))![1];

  return [
    result('baileys-footprint', `RSS of a daemon with ${COUNT} Baileys sessions vs an empty one, MB`, loaded.rss / 2 ** 20, empty.rss / 2 ** 20, 'MB'),
    result('baileys-footprint', 'RSS per Baileys session (live socket, not yet paired), KB (1 MB shown for scale; WAHA sizes about 200 MB)', per(loaded.rss, empty.rss), 1024, 'KB'),
    result('baileys-footprint', 'JS heap per session, KB (share of the RSS per session)', heapPerSession, per(loaded.rss, empty.rss), 'KB'),
    result('baileys-footprint', 'external + array buffers per session, KB (share of the RSS per session)', per(loaded.external, empty.external), per(loaded.rss, empty.rss), 'KB'),
    ...parts.filter(([name]) => !name.startsWith('makeWASocket')).map(([name, kb]) => result('baileys-footprint', `part: ${name}, KB per session (share of makeWASocket)`, kb, socketKb, 'KB')),
    ...consumers.slice(0, 3).map(([name, size]) => result('baileys-footprint', `heap: ${name} per session, KB (share of the heap per session)`, size / 1024, heapPerSession, 'KB')),
  ];
}

/** Lets start-up garbage settle before measuring. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

async function footprint(daemon: TestDaemon): Promise<Footprint> {
  const metrics = async () => {
    const text = (await daemon.request('GET', '/metrics')).body as string;
    return (name: string) => Number(new RegExp(`^${name} (\\d+(?:\\.\\d+)?)`, 'm').exec(text)?.[1] ?? 0);
  };
  // the RSS before the snapshot (writing one grows it); heap and external after it (it runs a full GC first)
  const rss = (await metrics())('gateway_process_resident_memory_bytes');
  const byConstructor = await heapByConstructor(daemon);
  const after = await metrics();
  return { rss, heapUsed: after('gateway_nodejs_heap_size_used_bytes'), external: after('gateway_nodejs_external_memory_bytes'), byConstructor };
}

/**
 * SIGUSR2 → a .heapsnapshot in the daemon's cwd, summed by owner: a named object, closure or native buffer counts its
 * own size plus the V8 internals (backing arrays, strings, hidden fields) it is the first strong retainer of, so
 * "Map" includes its hash table and a closure its context. What has no named owner stays in its V8 category.
 */
async function heapByConstructor(daemon: TestDaemon): Promise<Map<string, number>> {
  const before = new Set(snapshots(daemon.dataDir));
  daemon.child.kill('SIGUSR2');
  const file = await waitFor(() => snapshots(daemon.dataDir).find((f) => !before.has(f)), 30_000, 'a heap snapshot');
  const path = join(daemon.dataDir, file);
  await waitFor(() => statSync(path).size > 0 && readFileSync(path, 'utf8').trimEnd().endsWith('}'), 60_000, 'the heap snapshot to be written');
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  rmSync(path, { force: true });
  const { node_fields: fields, node_types: nodeTypes, edge_fields: edgeFields, edge_types: edgeTypes } = snapshot.snapshot.meta;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => fields.indexOf(f)) as [number, number, number, number];
  const edgeWidth = edgeFields.length;
  const [edgeTypeAt, toAt] = ['type', 'to_node'].map((f) => edgeFields.indexOf(f)) as [number, number];
  const weak = edgeTypes[0].indexOf('weak');
  const types = nodeTypes[0];
  const count = snapshot.nodes.length / width;
  const typeOf = (n: number) => types[snapshot.nodes[n * width + typeAt]!]!;
  const named = (n: number) => ['object', 'native', 'closure'].includes(typeOf(n));
  const owner = new Int32Array(count).fill(-1);
  for (let n = 0, e = 0; n < count; n += 1) {
    const edges = snapshot.nodes[n * width + edgeCountAt]!;
    for (let k = 0; k < edges; k += 1, e += 1) {
      if (!named(n) || snapshot.edges[e * edgeWidth + edgeTypeAt] === weak) continue;
      const to = snapshot.edges[e * edgeWidth + toAt]! / width;
      if (!named(to) && owner[to] === -1) owner[to] = n;
    }
  }
  const keyOf = (n: number) => `${typeOf(n)}:${(snapshot.strings[snapshot.nodes[n * width + nameAt]!] || '(anonymous)').slice(0, 48)}`;
  const sums = new Map<string, number>();
  for (let n = 0; n < count; n += 1) {
    const key = named(n) ? keyOf(n) : owner[n]! >= 0 ? keyOf(owner[n]!) : `${typeOf(n)}:(${typeOf(n)})`;
    sums.set(key, (sums.get(key) ?? 0) + snapshot.nodes[n * width + sizeAt]!);
  }
  return sums;
}

/**
 * The heap (and external memory) each part of a session costs, built PARTS times in this process against the same
 * silent endpoint: credentials, the cacheable key store, and the socket with the parts it creates inside (Signal
 * repository with its LID cache, message-retry manager, event buffer).
 */
async function socketParts(port: number): Promise<Array<[string, number]>> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const used = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const logger = pino({ level: 'silent' });
  const url = `ws://127.0.0.1:${port}/ws/chat`;
  const memoryStore = (): SignalKeyStore => {
    const map = new Map<string, unknown>();
    return {
      get: async (type, ids) => Object.fromEntries(ids.filter((id) => map.has(`${type}:${id}`)).map((id) => [id, map.get(`${type}:${id}`)])) as never,
      set: async (data) => {
        for (const [type, values] of Object.entries(data)) for (const [id, value] of Object.entries(values ?? {})) map.set(`${type}:${id}`, value);
      },
    };
  };
  const keep: unknown[] = [];
  const measure = async (build: () => unknown): Promise<number> => {
    const before = used();
    for (let i = 0; i < PARTS; i += 1) keep.push(build());
    await new Promise((r) => setTimeout(r, 500));
    return (used() - before) / PARTS / 1024;
  };
  // warm-up: build every part once and let the socket go, so compiled code and lazy module state are not counted
  const warm = makeWASocket({ auth: { creds: initAuthCreds(), keys: memoryStore() }, logger, waWebSocketUrl: url });
  makeLibSignalRepository({ creds: initAuthCreds(), keys: memoryStore() as never }, logger);
  new MessageRetryManager(logger, 5);
  makeEventBuffer(logger);
  await new Promise((r) => setTimeout(r, 300));
  await warm.end(undefined);
  await new Promise((r) => setTimeout(r, 500));
  used();
  const parts: Array<[string, number]> = [];
  parts.push(['credentials (initAuthCreds: identity, noise, signed pre-key)', await measure(() => initAuthCreds())]);
  parts.push(['cacheable signal key store', await measure(() => makeCacheableSignalKeyStore(memoryStore(), logger))]);
  parts.push(['Signal repository (libsignal + LID mapping cache)', await measure(() => makeLibSignalRepository({ creds: initAuthCreds(), keys: memoryStore() as never }, logger))]);
  parts.push(['message-retry manager (LRU caches)', await measure(() => new MessageRetryManager(logger, 5))]);
  parts.push(['event buffer', await measure(() => makeEventBuffer(logger))]);
  const sockets: Array<ReturnType<typeof makeWASocket>> = [];
  parts.push([
    'makeWASocket with an open socket (all of the above inside)',
    await measure(() => {
      const sock = makeWASocket({ auth: { creds: initAuthCreds(), keys: makeCacheableSignalKeyStore(memoryStore(), logger) }, logger, waWebSocketUrl: url, markOnlineOnConnect: false, syncFullHistory: false });
      sockets.push(sock);
      return sock;
    }),
  ]);
  for (const sock of sockets) await sock.end(undefined);
  keep.length = 0;
  return parts;
}

function snapshots(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot'));
}

/** Accepts TCP connections and never answers: a WebSocket upgrade that hangs, as a firewalled path can. */
async function silentEndpoint(): Promise<{ port: number; accepted(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
