// Counts per minute over a recent window, for the console's overview (GET /api/admin/activity): messages by direction
// (messages.timestamp), finished deliveries by outcome (deliveries.updated_at) and failed ones by webhook. Each statement
// is a range on an index that leads with that time and holds every column it reads (migration 015), so its cost follows
// the rows inside the window, never the size of the tables.
import type { Db } from './db.js';

const MINUTE_MS = 60_000;

export interface MinuteCount {
  /** the minute's start, in minutes since the epoch */
  minute: number;
  count: number;
}

export interface DirectionCounts {
  in: MinuteCount[];
  out: MinuteCount[];
}

export type ActivityRepo = ReturnType<typeof createActivityRepo>;

export function createActivityRepo(db: Db) {
  const messages = db.prepare(
    `SELECT timestamp / ${MINUTE_MS} AS minute, from_me AS "fromMe", COUNT(*) AS count FROM messages
     WHERE timestamp >= ? AND timestamp < ? GROUP BY timestamp / ${MINUTE_MS}, from_me`,
  );
  // one statement per outcome, so each ranges over its own partial index
  const finished = (status: 'succeeded' | 'failed') =>
    db.prepare(
      `SELECT updated_at / ${MINUTE_MS} AS minute, COUNT(*) AS count FROM deliveries
       WHERE status = '${status}' AND updated_at >= ? AND updated_at < ? GROUP BY updated_at / ${MINUTE_MS}`,
    );
  const succeeded = finished('succeeded');
  const failed = finished('failed');
  const failedByWebhook = db.prepare(
    `SELECT webhook_id AS "webhookId", COUNT(*) AS count FROM deliveries
     WHERE status = 'failed' AND updated_at >= ? AND updated_at < ? GROUP BY webhook_id`,
  );

  return {
    /** Messages stored with a timestamp in [from, to) (ms), per minute, received (`in`) and sent (`out`). */
    async messagesPerMinute(from: number, to: number): Promise<DirectionCounts> {
      const rows = (await messages.all(from, to)) as Array<{ minute: number; fromMe: number; count: number }>;
      return {
        in: rows.filter((r) => !r.fromMe).map(({ minute, count }) => ({ minute, count })),
        out: rows.filter((r) => r.fromMe).map(({ minute, count }) => ({ minute, count })),
      };
    },
    /** Deliveries that ended in [from, to) (ms), per minute: succeeded, and failed for good (their retries spent). */
    async deliveriesPerMinute(from: number, to: number): Promise<{ succeeded: MinuteCount[]; failed: MinuteCount[] }> {
      const [ok, ko] = await Promise.all([succeeded.all(from, to), failed.all(from, to)]);
      return { succeeded: ok as MinuteCount[], failed: ko as MinuteCount[] };
    },
    /** Deliveries that failed for good in [from, to) (ms), per webhook (webhooks without any are absent). */
    failedPerWebhook: async (from: number, to: number): Promise<Array<{ webhookId: number; count: number }>> =>
      (await failedByWebhook.all(from, to)) as Array<{ webhookId: number; count: number }>,
  };
}
