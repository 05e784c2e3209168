// Repository of idempotency keys: a request claims its key before it runs, and records how it ended.
import type { Db } from './db.js';

export type IdempotencyState = 'pending' | 'done' | 'unknown';

export interface IdempotencyRecord {
  fingerprint: string;
  state: IdempotencyState;
  runId: string;
  status: number | null;
  /** the answer's `data` as JSON (state done) */
  answer: string | null;
  createdAt: number;
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;

export function createIdempotencyRepo(db: Db) {
  // a key whose record expired is taken again as if new
  const claim = db.prepare(
    `INSERT INTO idempotency_keys (scope, key, fingerprint, state, run_id, created_at, expires_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)
     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'pending', run_id = excluded.run_id,
       status = NULL, answer = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= ?`,
  );
  const read = db.prepare(
    `SELECT fingerprint, state, run_id AS "runId", status, answer, created_at AS "createdAt" FROM idempotency_keys WHERE scope = ? AND key = ?`,
  );
  const readLive = db.prepare(
    `SELECT fingerprint, state, run_id AS "runId", status, answer, created_at AS "createdAt" FROM idempotency_keys WHERE scope = ? AND key = ? AND expires_at > ?`,
  );
  const finish = db.prepare("UPDATE idempotency_keys SET state = ?, status = ?, answer = ? WHERE scope = ? AND key = ? AND run_id = ? AND state = 'pending'");
  const release = db.prepare("DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND run_id = ? AND state = 'pending'");
  const prune = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?');

  const claimOrRead = db.transaction(async (scope: string, key: string, fingerprint: string, runId: string, now: number, expiresAt: number) => {
    const claimed = (await claim.run(scope, key, fingerprint, runId, now, expiresAt, now)).changes === 1;
    if (claimed) return { claimed: true as const };
    const record = (await read.get(scope, key)) as IdempotencyRecord | undefined;
    return { claimed: false as const, record: record && { ...record, createdAt: Number(record.createdAt) } };
  });

  return {
    /** Takes the key for this run, or returns the record of the request that holds it. */
    claim: (scope: string, key: string, fingerprint: string, runId: string, now: number, expiresAt: number) => claimOrRead(scope, key, fingerprint, runId, now, expiresAt),
    /** Records how the request that claimed the key ended: its answer (done), or that it may have sent (unknown). */
    async finish(scope: string, key: string, runId: string, state: 'done' | 'unknown', status: number | null, answer: string | null): Promise<void> {
      await finish.run(state, status, answer, scope, key, runId);
    },
    /** Gives the key up: the request ended before it sent anything, so a retry may run it again. */
    async release(scope: string, key: string, runId: string): Promise<void> {
      await release.run(scope, key, runId);
    },
    /** the record of a key, reading only (undefined: none, or expired) */
    async find(scope: string, key: string, now: number): Promise<IdempotencyRecord | undefined> {
      const record = (await readLive.get(scope, key, now)) as IdempotencyRecord | undefined;
      return record && { ...record, createdAt: Number(record.createdAt) };
    },
    pruneExpired: async (now: number): Promise<number> => (await prune.run(now)).changes,
  };
}
