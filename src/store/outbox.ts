// Repository of webhook deliveries (the outbox): rows written per event, due rows for the dispatcher, outcomes, the log.
import type { Db } from './db.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface NewDelivery {
  id: string;
  webhookId: number;
  eventId: string;
  event: string;
  session: string;
  /** the exact envelope JSON that is sent (and signed) on every attempt */
  body: string;
}

/** What the dispatcher needs to send a due delivery. */
export interface DueDelivery {
  id: string;
  webhookId: number;
  event: string;
  body: string;
  /** attempts made so far */
  attempts: number;
  /** value of `attempts` when the current retry budget started (a manual retry starts a fresh one) */
  budgetStart: number;
}

/** A delivery as the log shows it (without the body). */
export interface DeliveryRow {
  id: string;
  webhookId: number;
  eventId: string;
  event: string;
  session: string;
  status: DeliveryStatus;
  attempts: number;
  budgetStart: number;
  /** ms since the epoch; null unless pending */
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The recorded result of one attempt. */
export interface DeliveryOutcome {
  id: string;
  status: DeliveryStatus;
  attempts: number;
  budgetStart: number;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  at: number;
}

/** A webhook whose deliveries fail: since when (the oldest delivery that failed since its last success, ms). */
export interface FailingWebhook {
  webhookId: number;
  since: number;
  /** deliveries that failed an attempt since then (pending retries and failed ones) */
  deliveries: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

interface RawDelivery {
  id: string;
  webhook_id: number;
  event_id: string;
  event: string;
  session: string;
  status: DeliveryStatus;
  attempts: number;
  budget_start: number;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

const toRow = (r: RawDelivery): DeliveryRow => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventId: r.event_id,
  event: r.event,
  session: r.session,
  status: r.status,
  attempts: r.attempts,
  budgetStart: r.budget_start,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const LOG_COLUMNS =
  'id, webhook_id, event_id, event, session, status, attempts, budget_start, next_attempt_at, last_status_code, last_error, created_at, updated_at';

export type OutboxRepo = ReturnType<typeof createOutboxRepo>;

/** In a cluster: deliveries are claimed by this node before it attempts them (see `due`). */
export interface DeliveryClaims {
  nodeId: string;
  /** how long a claim lasts: an attempt's longest time with room to record it; then any node may take the row */
  claimMs: number;
  /** the in-flight cap of one webhook, across every node */
  perWebhook: number;
}

/** One advisory-lock namespace for "claiming for webhook N": claimers of one webhook take turns, others do not wait. */
const CLAIM_LOCK = 0x636c_6169; // 'clai'

export function createOutboxRepo(db: Db, claims?: DeliveryClaims) {
  // insertion order: SQLite's rowid, PostgreSQL's seq column
  const order = db.dialect === 'postgres' ? 'seq' : 'rowid';
  const insert = db.prepare(
    `INSERT INTO deliveries (id, webhook_id, event_id, event, session, body, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
  );
  const due = db.prepare(
    `SELECT id, webhook_id AS "webhookId", event, body, attempts, budget_start AS "budgetStart" FROM deliveries
     WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, ${order} LIMIT ?`,
  );
  const nextDueAll = db.prepare(
    `SELECT webhook_id AS "webhookId", MIN(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' GROUP BY webhook_id`,
  );
  const nextDueAfter = db
    .prepare(`SELECT MIN(next_attempt_at) FROM deliveries WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at > ?`)
    .pluck();
  const outcome = db.prepare(
    `UPDATE deliveries SET status = ?, attempts = ?, budget_start = ?, next_attempt_at = ?, last_status_code = ?, last_error = ?, updated_at = ?
     WHERE id = ?`,
  );
  const list = db.prepare(`SELECT ${LOG_COLUMNS} FROM deliveries WHERE webhook_id = ? ORDER BY ${order} DESC LIMIT ? OFFSET ?`);
  const listByStatus = db.prepare(
    `SELECT ${LOG_COLUMNS} FROM deliveries WHERE webhook_id = ? AND status = ? ORDER BY ${order} DESC LIMIT ? OFFSET ?`,
  );
  const count = db.prepare('SELECT COUNT(*) FROM deliveries WHERE webhook_id = ?').pluck();
  const countByStatus = db.prepare('SELECT COUNT(*) FROM deliveries WHERE webhook_id = ? AND status = ?').pluck();
  const countAllByStatus = db.prepare('SELECT COUNT(*) FROM deliveries WHERE status = ?').pluck();
  // with the rows of events still to be fanned out (fanouts), which are pending deliveries not yet written
  const backlog = db.prepare(
    `SELECT (SELECT COUNT(*) FROM deliveries WHERE status = 'pending') + (SELECT COALESCE(SUM(targets), 0) FROM fanouts) AS pending,
       (SELECT MIN(at) FROM (SELECT MIN(created_at) AS at FROM deliveries WHERE status = 'pending' UNION ALL SELECT MIN(created_at) FROM fanouts) AS oldest) AS "oldestCreatedAt"`,
  );
  const byId = db.prepare(`SELECT ${LOG_COLUMNS} FROM deliveries WHERE id = ? AND webhook_id = ?`);
  // per webhook, the deliveries that failed an attempt since its last success (or ever): how long it has been failing;
  // each webhook's last success is found once (a correlated subquery would rescan its succeeded rows per failed one)
  const failing = db.prepare(
    `WITH last_success AS (SELECT webhook_id, MAX(updated_at) AS at FROM deliveries WHERE status = 'succeeded' GROUP BY webhook_id),
     latest_failure AS (
       SELECT webhook_id, last_status_code, last_error, ROW_NUMBER() OVER (PARTITION BY webhook_id ORDER BY updated_at DESC) AS n
       FROM deliveries WHERE status <> 'succeeded' AND attempts > 0
     )
     SELECT d.webhook_id AS "webhookId", MIN(d.created_at) AS since, COUNT(*) AS deliveries, f.last_status_code AS "lastStatusCode", f.last_error AS "lastError"
     FROM deliveries d
     LEFT JOIN last_success s ON s.webhook_id = d.webhook_id
     JOIN latest_failure f ON f.webhook_id = d.webhook_id AND f.n = 1
     WHERE d.status <> 'succeeded' AND d.attempts > 0 AND d.created_at > COALESCE(s.at, -1)
     GROUP BY d.webhook_id, f.last_status_code, f.last_error ORDER BY since`,
  );
  const bodyById = db.prepare('SELECT body FROM deliveries WHERE id = ? AND webhook_id = ?').pluck();
  const requeue = db.prepare(
    `UPDATE deliveries SET status = 'pending', budget_start = attempts, next_attempt_at = ?, updated_at = ? WHERE id = ? AND webhook_id = ?`,
  );
  // one statement per status, so each uses its partial index on updated_at; pending rows are never pruned
  const pruneByStatus = (['succeeded', 'failed'] as const).map((status) =>
    db.prepare(`DELETE FROM deliveries WHERE ${order} IN (SELECT ${order} FROM deliveries WHERE status = '${status}' AND updated_at < ? LIMIT 5000)`),
  );

  // a cluster's claims (PostgreSQL): the oldest due rows no live claim holds, skipping rows another node is claiming at
  // this moment, never more than the webhook's cap counting every node's live claims; a claimer that finds another
  // claiming for the same webhook comes back later rather than wait
  // the lock's outcome is kept in a transaction-local setting that the claim reads, so both go down the pipe at once (one
  // round trip), and the claim, a statement of its own, sees every claim committed before the lock was taken
  const claimLock = claims && db.prepare("SELECT set_config('gateway.claim_lock', pg_try_advisory_xact_lock(?, ?)::text, true)").pluck();
  const claimDue =
    claims &&
    db.prepare(
      `UPDATE deliveries SET claimed_by = ?, claimed_until = ? WHERE id IN (
         SELECT id FROM deliveries WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
         ORDER BY next_attempt_at, seq
         LIMIT CASE WHEN current_setting('gateway.claim_lock', true) = 'true'
           THEN GREATEST(0, LEAST(?, ? - (SELECT COUNT(*) FROM deliveries WHERE webhook_id = ? AND status = 'pending' AND claimed_until > ?))) ELSE 0 END
         FOR UPDATE SKIP LOCKED)
       RETURNING id, webhook_id AS "webhookId", event, body, attempts, budget_start AS "budgetStart", next_attempt_at AS "nextAttemptAt", seq`,
    );
  const claimedOutcome =
    claims &&
    db.prepare(
      `UPDATE deliveries SET status = ?, attempts = ?, budget_start = ?, next_attempt_at = ?, last_status_code = ?, last_error = ?, updated_at = ?,
         claimed_by = NULL, claimed_until = NULL
       WHERE id = ? AND claimed_by = ?`,
    );
  const releaseClaims = claims && db.prepare('UPDATE deliveries SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ?');
  const claim = db.transaction(async (webhookId: number, now: number, limit: number): Promise<DueDelivery[]> => {
    if (!claims) return [];
    const [, claimed] = await Promise.all([claimLock!.get(CLAIM_LOCK, webhookId), claimDue!.all(claims.nodeId, now + claims.claimMs, webhookId, now, now, limit, claims.perWebhook, webhookId, now)]);
    const rows = claimed as Array<DueDelivery & { nextAttemptAt: number; seq: number }>;
    // UPDATE … RETURNING gives no order: back in the order they were picked
    return rows.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.seq - b.seq).map(({ id, webhookId: webhook, event, body, attempts, budgetStart }) => ({ id, webhookId: webhook, event, body, attempts, budgetStart }));
  });

  const insertOne = (d: NewDelivery, now: number) => insert.stage(d.id, d.webhookId, d.eventId, d.event, d.session, d.body, now, now, now);
  /** Writes one event's deliveries, all or none. */
  const recordEvent = db.transaction(async (deliveries: readonly NewDelivery[], now: number) => {
    // sent one after the other without waiting in between (pipelined on PostgreSQL); settled together
    await Promise.all(deliveries.map((d) => insert.run(d.id, d.webhookId, d.eventId, d.event, d.session, d.body, now, now, now)));
  });
  /** Records a batch of attempt outcomes in one transaction. */
  const recordOutcomes = db.transaction(async (outcomes: readonly DeliveryOutcome[]) => {
    const writes: Array<Promise<unknown>> = [];
    for (const o of outcomes) {
      // in a cluster, only under this node's claim: one that lapsed and was taken by another node is that node's now
      if (claims) writes.push(claimedOutcome!.run(o.status, o.attempts, o.budgetStart, o.nextAttemptAt, o.lastStatusCode, o.lastError, o.at, o.id, claims.nodeId));
      else writes.push(outcome.run(o.status, o.attempts, o.budgetStart, o.nextAttemptAt, o.lastStatusCode, o.lastError, o.at, o.id));
    }
    // sent one after the other without waiting in between (pipelined on PostgreSQL); settled together
    await Promise.all(writes);
  });

  return {
    /**
     * Writes one event's deliveries. Inside the tick's open transaction they are staged (no wait; the tick's commit
     * keeps them together); outside it, they go in a transaction of their own.
     */
    recordEvent(deliveries: readonly NewDelivery[], now = Date.now()): void | Promise<void> {
      if (db.inTransaction) {
        for (const d of deliveries) insertOne(d, now);
        return;
      }
      return recordEvent(deliveries, now);
    },
    /** Pending rows of one webhook due at `now`, oldest first; in a cluster, claimed by this node (see DeliveryClaims). */
    due: async (webhookId: number, now: number, limit: number): Promise<DueDelivery[]> =>
      claims ? claim(webhookId, now, limit) : ((await due.all(webhookId, now, limit)) as DueDelivery[]),
    /** whether `due` claims rows for this node among several */
    shared: claims !== undefined,
    /** Ends the claims held under this node's id (its previous run's, at start); none without claims. */
    async releaseOwnClaims(): Promise<void> {
      await releaseClaims?.run(claims!.nodeId);
    },
    /** Earliest next attempt of every webhook with pending rows. */
    nextDuePerWebhook: async (): Promise<Array<{ webhookId: number; at: number }>> => (await nextDueAll.all()) as Array<{ webhookId: number; at: number }>,
    /** Earliest next attempt after `after` (ms) among one webhook's pending rows, or null. */
    nextDueAfter: async (webhookId: number, after: number): Promise<number | null> => ((await nextDueAfter.get(webhookId, after)) as number | null | undefined) ?? null,
    /** Records a batch of attempt outcomes in one transaction (a savepoint of the tick when it is open). */
    async recordOutcomes(outcomes: readonly DeliveryOutcome[]): Promise<void> {
      if (outcomes.length) await recordOutcomes(outcomes);
    },
    async get(webhookId: number, id: string): Promise<DeliveryRow | undefined> {
      const raw = (await byId.get(id, webhookId)) as RawDelivery | undefined;
      return raw && toRow(raw);
    },
    /** the JSON body a delivery POSTs */
    bodyOf: async (webhookId: number, id: string): Promise<string | undefined> => (await bodyById.get(id, webhookId)) as string | undefined,
    /** The delivery log of one webhook, newest first. */
    async list(webhookId: number, status: DeliveryStatus | undefined, limit: number, offset: number): Promise<{ rows: DeliveryRow[]; total: number }> {
      const [raws, total] = await Promise.all([
        status ? listByStatus.all(webhookId, status, limit, offset) : list.all(webhookId, limit, offset),
        status ? countByStatus.get(webhookId, status) : count.get(webhookId),
      ]);
      return { rows: (raws as RawDelivery[]).map(toRow), total: total as number };
    },
    countByStatus: async (status: DeliveryStatus): Promise<number> => (await countAllByStatus.get(status)) as number,
    /** Pending deliveries of every webhook, and when the oldest of them was recorded (ms; null when none). */
    backlog: async (): Promise<{ pending: number; oldestCreatedAt: number | null }> => (await backlog.get()) as { pending: number; oldestCreatedAt: number | null },
    /** Webhooks whose deliveries have failed attempts since their last success, longest failing first. */
    failingWebhooks: async (): Promise<FailingWebhook[]> => (await failing.all()) as FailingWebhook[],
    /** Makes a delivery pending and due at `now` with a fresh retry budget; returns the row, or undefined when unknown. */
    async requeue(webhookId: number, id: string, now = Date.now()): Promise<DeliveryRow | undefined> {
      if (!(await requeue.run(now, now, id, webhookId)).changes) return undefined;
      return this.get(webhookId, id);
    },
    /** Deletes succeeded and failed deliveries last updated before `before` (ms), never pending ones; returns how many went. */
    async pruneFinished(before: number): Promise<number> {
      let total = 0;
      for (const prune of pruneByStatus) {
        for (;;) {
          const removed = (await prune.run(before)).changes;
          total += removed;
          if (removed < 5000) break;
        }
      }
      return total;
    },
  };
}
