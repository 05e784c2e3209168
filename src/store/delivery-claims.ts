// Repository of delivery claims on PostgreSQL (store.kind: postgres): the outbox shared by several daemons. A node claims
// due deliveries before it attempts them, oldest first, never one another node holds (FOR UPDATE SKIP LOCKED), and never
// more than the webhook's in-flight cap counting every node's live claims; a claim ends with its outcome, or lapses
// (its node died mid-attempt) and the delivery is due to any node again. Times are the database server's clock (ms).
import type { DueDelivery, DeliveryOutcome } from './outbox.js';
import type { PgSql } from './postgres.js';

/** One advisory-lock namespace for "claiming for webhook N": claimers of one webhook take turns, others do not wait. */
const CLAIM_LOCK = 0x636c_6169; // 'clai'

export type DeliveryClaimsRepo = ReturnType<typeof createDeliveryClaimsRepo>;

export function createDeliveryClaimsRepo(sql: PgSql, nodeId: string) {
  const now = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

  return {
    /**
     * Claims up to `limit` due deliveries of one webhook for `claimMs` (an attempt's longest time, with room to record
     * it), so that the webhook's live claims across all nodes stay within `cap`; oldest first.
     */
    async claim(webhookId: number, cap: number, limit: number, claimMs: number): Promise<DueDelivery[]> {
      return sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${CLAIM_LOCK}, ${webhookId})`;
        const [{ live }] = await tx<Array<{ live: number }>>`SELECT COUNT(*)::int AS live FROM deliveries
          WHERE webhook_id = ${webhookId} AND status = 'pending' AND claimed_until > ${now}`;
        const room = Math.min(limit, cap - live!);
        if (room <= 0) return [];
        // UPDATE … RETURNING gives no order: the rows are put back in the order they were picked
        const rows = await tx<Array<DueDelivery & { nextAttemptAt: number; seq: number }>>`UPDATE deliveries
          SET claimed_by = ${nodeId}, claimed_until = ${now} + ${claimMs}
          WHERE id IN (
            SELECT id FROM deliveries
            WHERE webhook_id = ${webhookId} AND status = 'pending' AND next_attempt_at <= ${now}
              AND (claimed_until IS NULL OR claimed_until <= ${now})
            ORDER BY next_attempt_at, seq LIMIT ${room} FOR UPDATE SKIP LOCKED)
          RETURNING id, webhook_id AS "webhookId", event, body, attempts, budget_start AS "budgetStart", next_attempt_at AS "nextAttemptAt", seq`;
        return [...rows]
          .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.seq - b.seq)
          .map(({ id, webhookId: webhook, event, body, attempts, budgetStart }) => ({ id, webhookId: webhook, event, body, attempts, budgetStart }));
      });
    },

    /**
     * Writes the outcomes of attempts this node made under its claims, ending the claims. An outcome whose claim lapsed
     * (another node may have claimed the delivery since) is not written; returns the ids that were.
     */
    async recordOutcomes(outcomes: readonly DeliveryOutcome[]): Promise<string[]> {
      if (outcomes.length === 0) return [];
      return sql.begin(async (tx) => {
        const written: string[] = [];
        for (const o of outcomes) {
          const done = await tx`UPDATE deliveries SET status = ${o.status}, attempts = ${o.attempts}, budget_start = ${o.budgetStart},
            next_attempt_at = ${o.nextAttemptAt}, last_status_code = ${o.lastStatusCode}, last_error = ${o.lastError}, updated_at = ${o.at},
            claimed_by = NULL, claimed_until = NULL
            WHERE id = ${o.id} AND claimed_by = ${nodeId} AND claimed_until > ${now}`;
          if (done.count > 0) written.push(o.id);
        }
        return written;
      });
    },
  };
}
