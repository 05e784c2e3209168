// The worker thread behind PostgresDatabase (postgres-bridge.ts): it owns the connection the repositories' statements run
// on and runs them in the order they were asked, pipelined (a statement is sent before the one ahead of it has answered).
// The daemon's thread waits for an answer only when it needs one (a read, a write outside a transaction, a commit it
// must know about); the writes of a transaction go out without a wait, and the first of them that fails is reported at
// the savepoint or commit that closes it, which then rolls back (PostgreSQL refuses everything after an error until then).
import { workerData, type MessagePort } from 'node:worker_threads';
import { connectPostgres, migratePostgres, type PgSql } from './postgres.js';
import type { BridgeReply, BridgeRequest, SerializedError } from './postgres-bridge.js';
import { createLeasesRepo } from './leases.js';

const { url, port, signal, answerTimeoutMs } = workerData as { url: string; port: MessagePort; signal: Int32Array; answerTimeoutMs: number };
// every statement on the daemon's connection ends on the server soon after the daemon's thread stopped waiting for it, and one
// waiting on a row lock (a long transaction elsewhere) gives up well before the daemon's thread would: the statements
// queued behind it on this one connection, other sessions' among them, still get their answers in time
const sql = connectPostgres(url, {
  max: 1,
  connection: { lock_timeout: Math.max(50, Math.floor(answerTimeoutMs / 4)), statement_timeout: 2 * answerTimeoutMs },
  failFast: true,
  onclose: () => transactionConnectionLost(),
});

/**
 * A transaction is opened with a savepoint that only its own connection has, and committed by releasing it in the same
 * query as the COMMIT: on a new connection (the transaction's was lost, and its writes with it) the release fails and the
 * COMMIT is not run, where a bare COMMIT would only warn that no transaction is open and report success.
 */
const BEGIN = 'BEGIN; SAVEPOINT transaction_connection';
const COMMIT = 'RELEASE SAVEPOINT transaction_connection; COMMIT';
/** what a statement of a transaction whose connection was lost reports (SQLSTATE class 08: the store is unreachable) */
const CONNECTION_LOST: SerializedError = { message: 'the connection to PostgreSQL was lost before the transaction committed; none of its writes was kept', code: '08003' };
/** a savepoint or COMMIT on a connection without the transaction: the transaction's connection was lost */
const LOST_CODES = new Set(['25P01', '3B001']);
const transactionError = (err: unknown): SerializedError => {
  const error = serialize(err);
  return LOST_CODES.has(error.code ?? '') ? CONNECTION_LOST : error;
};

type SentQuery = PromiseLike<unknown> & { cancel(): unknown };
/** the open transaction's queries not yet answered */
const unanswered = new Set<SentQuery>();

/** Sends a query of the open transaction, kept among `unanswered` until it is answered. */
function ofTransaction<Q extends SentQuery & { execute(): unknown }>(query: Q): Q {
  query.execute();
  unanswered.add(query);
  const answered = () => void unanswered.delete(query);
  query.then(answered, answered);
  return query;
}

/**
 * The connection closed with a transaction open: the transaction is gone with it. postgres.js would send the queries
 * still queued for it to the connection that replaces it, where they would run (and commit) outside the transaction:
 * they are cancelled before it connects (postgres.js calls `onclose` first), and the transaction reports the loss.
 */
function transactionConnectionLost(): void {
  for (const level of levels) level.error ??= CONNECTION_LOST;
  for (const query of unanswered) query.cancel();
  unanswered.clear();
}

/** Commits the open transaction on its own connection only; on any failure it is rolled back (a no-op where none is open). */
async function commit(): Promise<void> {
  try {
    await ofTransaction(sql.unsafe(COMMIT).simple());
  } catch (err) {
    await sql.unsafe('ROLLBACK').catch(() => {});
    throw Object.assign(new Error(), transactionError(err));
  }
}

/**
 * The cluster's own work (leases, the event channel), on connections of its own: their transactions are
 * driven by this thread, which never blocks, so a statement of the daemon's thread waiting on a row one of them holds
 * always sees it released.
 */
let cluster: { side: PgSql; services: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> } | undefined;

/** the transaction and its savepoints, outermost first: the first error seen inside each */
interface Level {
  error?: SerializedError;
  pending: Array<Promise<unknown>>;
}
const levels: Level[] = [];
/** each request starts once the one before it has been sent (a control one once the writes before it have answered) */
let queue: Promise<void> = Promise.resolve();

function reply(message: BridgeReply): void {
  port.postMessage(message);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

function serialize(err: unknown): SerializedError {
  const e = err as { message?: string; code?: string };
  return { message: e.message ?? String(err), code: typeof e.code === 'string' ? e.code : undefined };
}

/** structured clone turns a Buffer into a plain Uint8Array: PostgreSQL's bytea wants the Buffer back */
const asParam = (value: unknown) => (value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value === undefined ? null : value);

let reads = 0;

/**
 * A read inside a transaction runs in a savepoint of its own: on PostgreSQL a failed statement spoils its whole
 * transaction, and a read that fails (a value out of a column's range) must fail alone, as on SQLite, not take the
 * tick's writes with it. The daemon's thread waits for the read, so nothing is queued behind it meanwhile.
 */
async function guardedRead(request: Extract<BridgeRequest, { op: 'query' }>): Promise<void> {
  const name = `read_${++reads}`;
  const saved = ofTransaction(sql.unsafe(`SAVEPOINT ${name}`));
  const unsent = sql.unsafe(request.text, request.params.map(asParam) as never[]);
  // sent in this order, before any answer: a query is sent when it is executed
  const query = ofTransaction(request.values ? unsent.values() : unsent);
  const released = ofTransaction(sql.unsafe(`RELEASE SAVEPOINT ${name}`));
  const [, result] = await Promise.allSettled([saved, query, released]);
  if (result.status === 'fulfilled') return reply({ id: request.id, rows: [...result.value] as unknown[], count: result.value.count ?? 0 });
  const level = levels.at(-1)!;
  try {
    await ofTransaction(sql.unsafe(`ROLLBACK TO SAVEPOINT ${name}`));
    await ofTransaction(sql.unsafe(`RELEASE SAVEPOINT ${name}`));
  } catch (err) {
    // the transaction was spoilt before the read (a write sent ahead of it failed): its commit reports that
    await settled(level);
    level.error ??= transactionError(err);
    // and so does the read: why the transaction failed, not that it had
    return reply({ id: request.id, error: level.error });
  }
  reply({ id: request.id, error: serialize(result.reason) });
}

function runQuery(request: Extract<BridgeRequest, { op: 'query' }>): void | Promise<void> {
  const level = levels.at(-1);
  // a transaction that failed already (its connection was lost) sends nothing more: on a new connection it would run outside it
  if (level?.error) return reply({ id: request.id, error: level.error });
  if (request.read && levels.length > 0) return guardedRead(request);
  const unsent = sql.unsafe(request.text, request.params.map(asParam) as never[]);
  const query = request.values ? unsent.values() : unsent;
  const answered = (level ? ofTransaction(query) : query).then(
    (result) => reply({ id: request.id, rows: [...result] as unknown[], count: result.count ?? 0 }),
    (err: unknown) => {
      const error = level ? transactionError(err) : serialize(err);
      if (level && !level.error) level.error = error;
      reply({ id: request.id, error });
    },
  );
  level?.pending.push(answered);
}

async function settled(level: { pending: Array<Promise<unknown>> }): Promise<void> {
  await Promise.all(level.pending);
  level.pending = [];
}

async function control(request: Exclude<BridgeRequest, { op: 'query' }>): Promise<void> {
  try {
    switch (request.op) {
      // a level is pushed even when its statement fails, so that the release or commit the daemon's thread sends for it
      // finds it: that one reports the failure
      case 'begin': {
        const level: Level = { pending: [], error: request.failed };
        levels.push(level);
        // `failed`: the transaction began in a worker that died; it is only there to fail what is sent into it
        if (!level.error) await ofTransaction(sql.unsafe(BEGIN).simple()).then(undefined, (err: unknown) => (level.error ??= transactionError(err)));
        return reply(level.error ? { id: request.id, error: level.error } : { id: request.id, rows: [], count: 0 });
      }
      case 'savepoint': {
        const outer = levels.at(-1);
        const level: Level = { pending: [] };
        levels.push(level);
        if (outer) await settled(outer);
        level.error = outer?.error;
        if (!level.error) await ofTransaction(sql.unsafe(`SAVEPOINT ${request.name}`)).then(undefined, (err: unknown) => (level.error ??= transactionError(err)));
        return reply(level.error ? { id: request.id, error: level.error } : { id: request.id, rows: [], count: 0 });
      }
      case 'release':
      case 'rollbackTo': {
        const level = levels.pop();
        if (!level) throw new Error('no savepoint is open');
        await settled(level);
        if (level.error || request.op === 'rollbackTo') {
          // a savepoint that failed to open, or an outer transaction spoilt before it: the error goes on outward
          try {
            await ofTransaction(sql.unsafe(`ROLLBACK TO SAVEPOINT ${request.name}`));
            await ofTransaction(sql.unsafe(`RELEASE SAVEPOINT ${request.name}`));
          } catch (err) {
            const outer = levels.at(-1);
            if (outer) outer.error ??= level.error ?? transactionError(err);
          }
          return reply(level.error && request.op === 'release' ? { id: request.id, error: level.error } : { id: request.id, rows: [], count: 0 });
        }
        await ofTransaction(sql.unsafe(`RELEASE SAVEPOINT ${request.name}`));
        return reply({ id: request.id, rows: [], count: 0 });
      }
      case 'commit':
      case 'rollback': {
        // a savepoint left open by a thrown callback ends with its transaction
        const all = levels.splice(0);
        for (const level of all) await settled(level);
        const error = all.find((level) => level.error)?.error;
        if (error || request.op === 'rollback') {
          await sql.unsafe('ROLLBACK').catch(() => {});
          return reply(error && request.op === 'commit' ? { id: request.id, error } : { id: request.id, rows: [], count: 0 });
        }
        await commit();
        return reply({ id: request.id, rows: [], count: 0 });
      }
      case 'migrate':
        return reply({ id: request.id, rows: await migratePostgres(sql), count: 0 });
      case 'cluster': {
        const side = connectPostgres(url, { max: 4, connection: { lock_timeout: 10_000, statement_timeout: 5 * answerTimeoutMs }, failFast: true });
        const services = { leases: createLeasesRepo(side, request.nodeId, request.leaseMs) } as never;
        const tell = (message: { notification: string } | { listening: true }) => {
          port.postMessage(message);
          Atomics.add(signal, 0, 1);
          Atomics.notify(signal, 0);
        };
        // told each time the LISTEN (re)starts: what was sent while it was down is never heard, so caches are read again
        try {
          await side.listen(request.channel, (payload) => tell({ notification: payload }), () => tell({ listening: true }));
        } catch (err) {
          await side.end({ timeout: 1 }).catch(() => {});
          throw err;
        }
        cluster = { side, services };
        return reply({ id: request.id, rows: [], count: 0 });
      }
      case 'call': {
        const service = cluster?.services[request.service];
        // a worker that replaced one that died sets the cluster's connections up again (PostgresDatabase.rejoin)
        if (!cluster) return reply({ id: request.id, error: { message: 'the connections to PostgreSQL are being set up again', code: 'UNREACHABLE' } });
        if (!service?.[request.method]) throw new Error(`no cluster service ${request.service}.${request.method}`);
        return reply({ id: request.id, rows: [await service[request.method]!(...request.args)], count: 0 });
      }
      case 'close':
        await cluster?.side.end({ timeout: 5 });
        await sql.end({ timeout: 5 });
        return reply({ id: request.id, rows: [], count: 0 });
    }
  } catch (err) {
    reply({ id: request.id, error: serialize(err) });
  }
}

port.on('message', (request: BridgeRequest) => {
  // the cluster's calls run on connections of their own, never behind the main connection's work (a lease renewal must
  // not wait for a commit stuck on a lock)
  if (request.op === 'call') return void control(request);
  // whatever goes wrong with one request is its answer: the queue goes on to the next
  queue = queue
    .then(() => (request.op === 'query' ? runQuery(request) : control(request)))
    .catch((err: unknown) => reply({ id: request.id, error: serialize(err) }));
});
