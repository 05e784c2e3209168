// Repository of the event log: each event once, by session and number, as the envelope streams and webhooks carry.
import type { Db } from './db.js';

export interface LoggedEvent {
  session: string;
  seq: number;
  event: string;
  /** ms since the epoch */
  at: number;
  /** the event as JSON, exactly as it was streamed */
  envelope: string;
}

export type EventLogRepo = ReturnType<typeof createEventLogRepo>;

/** rows one prune statement deletes, so a large backlog is removed in short transactions */
const PRUNE_BATCH = 5000;

export function createEventLogRepo(db: Db) {
  // a number taken twice (two nodes both writing a session during a lease hand-over) must not fail the whole tick
  const append = db.prepare('INSERT INTO event_log (session, seq, event, at, envelope) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session, seq) DO NOTHING');
  const lastOfEach = db.prepare('SELECT session, MAX(seq) AS seq FROM event_log GROUP BY session');
  const lastOf = db.prepare('SELECT MAX(seq) FROM event_log WHERE session = ?').pluck();
  // types: a comma list, '' for all
  const page = db.prepare(
    `SELECT envelope FROM event_log WHERE session = ? AND seq > ? AND seq <= ? AND (? = '' OR (',' || ? || ',') LIKE ('%,' || event || ',%'))
     ORDER BY seq LIMIT ?`,
  ).pluck();
  // the newest event of each session is kept whatever its age: its number is where the session's next one starts
  const prune = db.prepare(
    `DELETE FROM event_log WHERE (session, seq) IN (
       SELECT session, seq FROM event_log e WHERE at < ? AND seq < (SELECT MAX(seq) FROM event_log l WHERE l.session = e.session) LIMIT ${PRUNE_BATCH})`,
  );

  return {
    /** staged into the open tick (the bus joins it first) */
    append(entry: LoggedEvent): void {
      append.stage(entry.session, entry.seq, entry.event, entry.at, entry.envelope);
    },
    /** the newest number of every session with a logged event */
    async lastNumbers(): Promise<Map<string, number>> {
      const rows = (await lastOfEach.all()) as Array<{ session: string; seq: number | string }>;
      return new Map(rows.map((row) => [row.session, Number(row.seq)]));
    },
    async lastNumber(session: string): Promise<number> {
      return Number((await lastOf.get(session)) ?? 0);
    },
    /** the envelopes of `session` numbered after `after` up to `upTo`, oldest first, of the given types (all when empty) */
    async page(session: string, after: number, upTo: number, types: readonly string[], limit: number): Promise<string[]> {
      const list = types.join(',');
      return (await page.all(session, after, upTo, list, list, limit)) as string[];
    },
    /** deletes events older than `before` (ms), but never a session's newest; returns how many */
    async pruneOlderThan(before: number): Promise<number> {
      let total = 0;
      for (;;) {
        const removed = (await prune.run(before)).changes;
        total += removed;
        if (removed < PRUNE_BATCH) return total;
      }
    },
  };
}
