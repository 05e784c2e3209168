// `node dist/bench/pg-clients.js`: the two PostgreSQL clients issue 22 names, pg (node-postgres) and postgres
// (postgres.js), on what the gateway's store would ask of them, against one throwaway server (test/helpers/postgres.ts):
// round trips one at a time (a credential read), many small queries in flight at once (requests of many sessions), and a
// tick's writes as one transaction of 20 inserts (the event writes SQLite groups per tick today), each pipelined where
// the client can. Plus the cost of loading each. Each case alternates the clients, three rounds, best round kept.
// Standalone (not in `npm run bench`): it informs a choice, it is not a tracked row.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startPostgres } from '../test/helpers/postgres.js';

const SEQUENTIAL = 3_000;
const CONCURRENT = 20_000;
const IN_FLIGHT = 64;
const POOL = 4;
const TICKS = 500;
const ROWS_PER_TICK = 20;
const ROUNDS = 3;

interface Client {
  one(key: string): Promise<unknown>;
  tick(rows: Array<[string, string, number]>): Promise<void>;
  end(): Promise<void>;
}

async function pgClient(url: string): Promise<Client> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  return {
    one: async (key) => (await pool.query({ name: 'one', text: 'SELECT value FROM kv WHERE key = $1', values: [key] })).rows[0],
    async tick(rows) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // node-postgres sends the next query only when the last has answered: no pipelining
        for (const row of rows) await client.query({ name: 'ins', text: 'INSERT INTO events (id, body, at) VALUES ($1, $2, $3)', values: row });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
    end: () => pool.end(),
  };
}

async function postgresJsClient(url: string): Promise<Client> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: POOL, prepare: true, onnotice: () => {} });
  return {
    one: async (key) => (await sql`SELECT value FROM kv WHERE key = ${key}`)[0],
    async tick(rows) {
      // every statement of the transaction goes out before the first answer returns (pipelined on one connection)
      await sql.begin((tx) => rows.map(([id, body, at]) => tx`INSERT INTO events (id, body, at) VALUES (${id}, ${body}, ${at})`));
    },
    end: () => sql.end(),
  };
}

/** row ids, unique across clients and rounds */
let serial = 0;

const CLIENTS: Record<string, (url: string) => Promise<Client>> = { pg: pgClient, postgres: postgresJsClient };

async function measure(name: string, url: string): Promise<Record<string, number>> {
  const client = await CLIENTS[name]!(url);
  const body = JSON.stringify({ event: 'message.received', payload: { text: 'x'.repeat(300) } });
  try {
    for (let i = 0; i < 200; i++) await client.one(`k${i % 100}`);
    let started = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) await client.one(`k${i % 100}`);
    const sequentialUs = ((performance.now() - started) * 1000) / SEQUENTIAL;
    started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CONCURRENT) await client.one(`k${next++ % 100}`);
    }));
    const concurrentPerS = CONCURRENT / ((performance.now() - started) / 1000);
    started = performance.now();
    let ticks = 0;
    await Promise.all(Array.from({ length: POOL }, async () => {
      while (ticks < TICKS) {
        ticks += 1;
        await client.tick(Array.from({ length: ROWS_PER_TICK }, () => [`${name}-${serial++}`, body, Date.now()] as [string, string, number]));
      }
    }));
    const rowsPerS = (TICKS * ROWS_PER_TICK) / ((performance.now() - started) / 1000);
    return { sequentialUs, concurrentPerS, rowsPerS };
  } finally {
    await client.end();
  }
}

/** RSS and time to import the client alone, in a fresh process. */
function loadCost(name: string): { ms: number; mb: number } {
  const script = `const t = performance.now(); const r = process.memoryUsage().rss; await import('${name}'); console.log(JSON.stringify({ ms: performance.now() - t, mb: (process.memoryUsage().rss - r) / 1048576 }))`;
  return JSON.parse(spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) }).stdout) as { ms: number; mb: number };
}

const server = await startPostgres();
try {
  const { default: postgres } = await import('postgres');
  const setup = postgres(server.url, { onnotice: () => {} });
  await setup`CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)`;
  await setup`CREATE TABLE events (id TEXT PRIMARY KEY, body TEXT NOT NULL, at BIGINT NOT NULL)`;
  await setup`INSERT INTO kv SELECT 'k' || i, repeat('v', 200) FROM generate_series(0, 99) AS i`;
  await setup.end();
  const best: Record<string, Record<string, number>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 ? ['postgres', 'pg'] : ['pg', 'postgres']) {
      const got = await measure(name, server.url);
      const kept = (best[name] ??= { sequentialUs: Infinity, concurrentPerS: 0, rowsPerS: 0 });
      kept.sequentialUs = Math.min(kept.sequentialUs!, got.sequentialUs!);
      kept.concurrentPerS = Math.max(kept.concurrentPerS!, got.concurrentPerS!);
      kept.rowsPerS = Math.max(kept.rowsPerS!, got.rowsPerS!);
    }
  }
  process.stdout.write(`${process.version}, PostgreSQL on loopback (fsync off), pool of ${POOL} connections, best of ${ROUNDS} alternating rounds\n`);
  process.stdout.write('client    one query at a time (µs)  queries/s, 64 in flight  rows/s, ticks of 20 inserts  import ms  import MB\n');
  for (const name of Object.keys(CLIENTS)) {
    const b = best[name]!;
    const load = loadCost(name);
    process.stdout.write(
      `${name.padEnd(8)}  ${b.sequentialUs!.toFixed(1).padStart(24)}  ${Math.round(b.concurrentPerS!).toString().padStart(23)}  ${Math.round(b.rowsPerS!).toString().padStart(27)}  ${load.ms.toFixed(0).padStart(9)}  ${load.mb.toFixed(1).padStart(9)}\n`,
    );
  }
} finally {
  server.stop();
}
