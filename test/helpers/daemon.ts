// Starts the real daemon (bin/gateway serve) as a child process on a free port with a temporary data dir and the sandbox engine.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkResponse } from './contract.js';
import { postgresBinDir } from './postgres.js';

export const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const BIN = join(ROOT, 'bin', 'gateway');
export const MASTER_KEY = 'svc_master_test_0123456789abcdef0123456789';
/** the nodes' shared hop secret (cluster.secret, required on PostgreSQL; ignored on SQLite) */
export const CLUSTER_SECRET = 'test-cluster-secret-0123456789abcdef';

export interface TestDaemon {
  url: string;
  dataDir: string;
  masterKey: string;
  child: ChildProcess;
  /** everything the daemon printed so far */
  output(): string;
  /** GET/POST/… with the master key (or `key`), returning status, parsed body and headers; the answer must fit the OpenAPI document (test/helpers/contract.ts) */
  request<T = any>(method: string, path: string, body?: unknown, key?: string | null, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  /** SIGTERM and wait for exit; returns the exit code */
  stop(): Promise<number | null>;
  /** SIGKILL and wait */
  kill(): Promise<void>;
  /** stop (if running) and remove the data dir */
  cleanup(): Promise<void>;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface DaemonOptions {
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** fixed port (a restarted daemon keeps its address); a free one by default */
  port?: number;
  /** gateway.yaml text, written into the daemon's working directory */
  config?: string;
  /** flags for node itself, before the script (`--cpu-prof`, which NODE_OPTIONS does not take) */
  nodeArgs?: string[];
  /** how long the daemon may take to answer its first health check (default 15 s) */
  listenTimeoutMs?: number;
}

export async function startDaemon(options: DaemonOptions = {}): Promise<TestDaemon> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gateway-test-'));
  if (options.config !== undefined) writeFileSync(join(dataDir, 'gateway.yaml'), options.config, { mode: 0o600 });
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, 'serve', ...(options.args ?? [])], {
    cwd: dataDir,
    env: {
      PATH: process.env.PATH ?? '',
      // a host with the service installed keeps its /etc/session-gateway/gateway.env to itself
      GATEWAY_ENV_FILE: '',
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_CLUSTER_SECRET: CLUSTER_SECRET,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_DEFAULT_ENGINE: 'sandbox',
      GATEWAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      // loopback media servers in tests (media URLs have their own opt-in)
      GATEWAY_MEDIA_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_S3_ALLOW_PRIVATE_ENDPOINT: 'true',
      GATEWAY_LOG_LEVEL: 'info',
      // the send governor paces and caps sends (on by default for operators); tests of other behaviours send freely, and
      // the governor's own tests turn it on (test/messages/governor-*.test.ts)
      GATEWAY_GOVERNOR_ENABLED: 'false',
      ...postgresStoreEnv(dataDir),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode} before listening:\n${output}`);
        return fetch(`${url}/api/health`).then((r) => r.ok, () => false);
      },
      // generous: a daemon restoring Baileys sessions loads Baileys before it listens, and two daemons starting at once
      // took over 15 s on a loaded machine (the wait ends as soon as it answers)
      options.listenTimeoutMs ?? 60_000,
      `the daemon to listen on ${url}`,
    );
  } catch (err) {
    // a daemon left running would keep this test process (and the whole run) alive
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${output}`);
  }

  const daemon: TestDaemon = {
    url,
    dataDir,
    masterKey: MASTER_KEY,
    child,
    output: () => output,
    async request(method, path, body, key = MASTER_KEY, headers = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (key) (init.headers as Record<string, string>).Authorization = `Bearer ${key}`;
      if (body !== undefined) {
        (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
      }
      const response = await fetch(url + path, init);
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      checkResponse(method, path, response.status, response.headers, parsed, text);
      return { status: response.status, body: parsed as any, headers: response.headers };
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    async cleanup() {
      await daemon.kill();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return daemon;
}

/**
 * The suite's PostgreSQL pass (test/support/postgres-pass.ts sets GATEWAY_TEST_PG_URL): every data dir gets its own
 * database on that server, so each daemon starts empty and a restarted one (same data dir) finds its state again.
 */
export function postgresStoreEnv(dataDir: string): Record<string, string> {
  const server = process.env.GATEWAY_TEST_PG_URL;
  if (!server) return {};
  const name = `gw_${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 20)}`;
  const psql = (sql: string) => execFileSync(join(postgresBinDir() ?? '/usr/bin', 'psql'), [server, '-tAqc', sql], { encoding: 'utf8', stdio: 'pipe' }).trim();
  if (psql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`) !== '1') psql(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  // a node id per data dir: a daemon restarted on it is the same node, which frees its previous run's leases at once
  return { GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: url.toString(), GATEWAY_NODE_ID: name };
}

/** Polls until `check` returns a truthy value or the timeout passes. */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** After a 5xx, the daemon's warnings and errors (what it logged about the request is there and nowhere else). */
function logOf(daemon: TestDaemon, status: number): string {
  if (status < 500) return '';
  const lines = daemon.output().split('\n').filter((line) => /"level":(40|50|60)/.test(line));
  return `\ndaemon log:\n${lines.slice(-20).join('\n')}`;
}

/** Creates a sandbox session, starts it and pairs it; returns its phone number. */
export async function pairedSession(daemon: TestDaemon, name: string, phoneNumber: string, extra: Record<string, unknown> = {}): Promise<void> {
  const created = await daemon.request('POST', '/api/sessions', { name, start: true, engine: 'sandbox' });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}${logOf(daemon, created.status)}`);
  const paired = await daemon.request('POST', `/api/sandbox/sessions/${name}/pair`, { phoneNumber, ...extra });
  if (paired.status !== 200) throw new Error(`pair ${name}: ${paired.status} ${JSON.stringify(paired.body)}${logOf(daemon, paired.status)}`);
  await waitFor(async () => (await daemon.request('GET', `/api/sessions/${name}`)).body.data.status === 'CONNECTED', 5000, `${name} CONNECTED`);
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}
