// A throwaway PostgreSQL server for tests and benchmarks: Debian's `postgresql` package (initdb, pg_ctl), a cluster in a
// temporary directory on a free port of 127.0.0.1, stopped and removed afterwards. Run as root (CI), the server runs as
// the `postgres` user, since initdb and postgres refuse root.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { openPgDb, type PgDb } from '../../src/store/pg-db.js';
import { freePort } from './daemon.js';

export interface TestPostgres {
  /** postgres://… of the database `gateway`, owned by a superuser without a password (trust on loopback only) */
  url: string;
  port: number;
  /** a fresh empty database on the same server; its URL */
  createDatabase(name: string): string;
  /** `pg_ctl restart -m fast`: every connection is closed, the server is back once this returns */
  restart(): Promise<void>;
  /** stops the server (`-m fast`) until `resume` */
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): void;
}

/** Where Debian installs the server binaries: /usr/lib/postgresql/<major>/bin, newest first. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  const dir = majors.map((major) => join(root, major, 'bin')).find((bin) => existsSync(join(bin, 'pg_ctl')));
  return dir;
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL's server is not installed: apt-get install postgresql (.ci/run does)");
  const root = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'gateway-pg-'));
  const data = join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  // as the server's own user: root runs it through runuser, anyone else directly
  const run = (command: string, args: string[]) =>
    execFileSync(root ? 'runuser' : join(bin, command), root ? ['-u', 'postgres', '--', join(bin, command), ...args] : args, { stdio: 'pipe', encoding: 'utf8', cwd: dir });
  const port = await freePort();
  const superuser = root ? 'postgres' : userInfo().username;
  const stopServer = () => {
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
  };
  const psql = (database: string, sql: string) =>
    execFileSync(join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', superuser, '-d', database, '-v', 'ON_ERROR_STOP=1', '-c', sql], { stdio: 'pipe' });
  const urlOf = (database: string) => `postgres://${superuser}@127.0.0.1:${port}/${database}`;
  const createDatabase = (name: string) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
    psql('postgres', `CREATE DATABASE ${name}`);
    return urlOf(name);
  };
  const startArgs = [
    '-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`,
  ];
  const startServer = () => run('pg_ctl', [...startArgs, 'start']);
  // the same, without blocking this process (daemons' traffic goes on while the server goes down and comes back)
  const runAsync = (command: string, args: string[]) =>
    new Promise<void>((done, fail) =>
      execFile(root ? 'runuser' : join(bin, command), root ? ['-u', 'postgres', '--', join(bin, command), ...args] : args, { cwd: dir }, (err) => (err ? fail(err) : done())),
    );
  let url: string;
  try {
    // C locale: text sorts by bytes, as SQLite's BINARY collation does
    run('initdb', ['-D', data, '--locale=C', '-E', 'UTF8', '-A', 'trust', '-U', superuser]);
    startServer();
    url = createDatabase('gateway');
  } catch (err) {
    // a start that timed out may still have left a server running on that directory
    stopServer();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start PostgreSQL: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  }
  let stopped = false;
  return {
    url,
    port,
    createDatabase,
    restart: () => runAsync('pg_ctl', [...startArgs, '-m', 'fast', 'restart']),
    halt: () => runAsync('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    resume: () => runAsync('pg_ctl', [...startArgs, 'start']),
    stop() {
      if (stopped) return;
      stopped = true;
      stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TcpRelay {
  url: string;
  /** cuts every connection at once and refuses new ones, as a network partition would */
  cut(): void;
  /**
   * Round trips so far: each time a connection sends to the server after the server last sent to it (a client that
   * pipelines its statements behind one another waits once).
   */
  turns(): number;
}

/**
 * A TCP relay to `server`. `delayMs`: every chunk sent to the server is held that long first (in order), as a database on
 * another host would add to each round trip.
 */
export async function tcpRelay(server: TestPostgres, database?: string, options: { delayMs?: number } = {}): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const delayMs = options.delayMs ?? 0;
  let turns = 0;
  const proxy = createServer((client) => {
    const upstream = connect({ port: server.port, host: '127.0.0.1', noDelay: true });
    client.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => (client.destroy(), upstream.destroy()));
    }
    let answered = true;
    let lastDue = 0;
    client.on('data', (chunk: Buffer) => {
      if (answered) turns++;
      answered = false;
      if (delayMs === 0) return void upstream.write(chunk);
      const due = Math.max(performance.now() + delayMs, lastDue);
      lastDue = due;
      setTimeout(() => upstream.write(chunk), due - performance.now());
    });
    upstream.on('data', (chunk: Buffer) => {
      answered = true;
      client.write(chunk);
    });
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  const url = new URL(server.url);
  url.port = String((proxy.address() as AddressInfo).port);
  if (database) url.pathname = `/${database}`;
  return {
    url: url.toString(),
    cut() {
      proxy.close();
      for (const socket of sockets) socket.destroy();
    },
    turns: () => turns,
  };
}

/** The daemon's PostgreSQL store opened on databases of a test's server, migrated; `closeAll` closes them all. */
export function pgStores(): { open(url: string): Promise<PgDb>; closeAll(): Promise<void> } {
  const opened: PgDb[] = [];
  return {
    async open(url) {
      const db = await openPgDb(url);
      opened.push(db);
      return db;
    },
    closeAll: async () => {
      await Promise.all(opened.splice(0).map((db) => db.close()));
    },
  };
}
