// Repository of event fan-outs: an event recorded once for the webhooks it is for, whose delivery rows are written from
// it a bounded number at a time (webhooks/fanout.ts), oldest first.
import type { Db } from './db.js';
import type { NewDelivery } from './outbox.js';

export interface NewFanout {
  eventId: string;
  event: string;
  session: string;
  /** the event's number in its session's log */
  seq: number;
  timestamp: string;
  /** the event's payload as the JSON its deliveries carry */
  payload: string;
  webhookIds: readonly number[];
}

export interface Fanout extends NewFanout {
  /** when the event was recorded (ms): its deliveries' creation and first due time */
  createdAt: number;
}

interface RawFanout {
  id: number;
  eventId: string;
  event: string;
  session: string;
  seq: number;
  timestamp: string;
  payload: string;
  webhookIds: string;
  createdAt: number;
}

export type FanoutsRepo = ReturnType<typeof createFanoutsRepo>;

export function createFanoutsRepo(db: Db) {
  const insert = db.prepare('INSERT INTO fanouts (event_id, event, session, seq, timestamp, payload, webhook_ids, targets, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  // in a cluster, rows another node is expanding are skipped, not waited for
  const oldest = db.prepare(
    `SELECT id, event_id AS "eventId", event, session, seq, timestamp, payload, webhook_ids AS "webhookIds", created_at AS "createdAt"
     FROM fanouts ORDER BY id LIMIT ?${db.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''}`,
  );
  const any = db.prepare('SELECT 1 FROM fanouts LIMIT 1').pluck();
  const count = db.prepare('SELECT COUNT(*) FROM fanouts').pluck();
  const webhookIds = db.prepare('SELECT id FROM webhooks').pluck();
  const insertDelivery = db.prepare(
    `INSERT INTO deliveries (id, webhook_id, event_id, event, session, body, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
  );
  const keepRest = db.prepare('UPDATE fanouts SET webhook_ids = ?, targets = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM fanouts WHERE id = ?');

  /** the writes of one chunk, as one transaction (a savepoint of the tick when it is open) */
  const expandChunk = db.transaction(
    async (limit: number, build: (fanout: Fanout, webhookId: number) => NewDelivery, now: number): Promise<{ written: NewDelivery[]; fanouts: number }> => {
      const [rows, ids] = await Promise.all([oldest.all(Math.max(1, Math.ceil(limit / 8))), webhookIds.all()]);
      if (rows.length === 0) return { written: [], fanouts: 0 };
      const live = new Set(ids as number[]);
      const written: NewDelivery[] = [];
      // sent one after the other without a wait in between (pipelined on PostgreSQL); the transaction ends once all answered
      const writes: Array<Promise<unknown>> = [];
      for (const raw of rows as RawFanout[]) {
        const targets = raw.webhookIds.split(',').map(Number);
        const fanout: Fanout = { ...raw, webhookIds: targets };
        const room = limit - written.length;
        for (const webhookId of targets.slice(0, room)) {
          if (!live.has(webhookId)) continue;
          const d = build(fanout, webhookId);
          writes.push(insertDelivery.run(d.id, d.webhookId, d.eventId, d.event, d.session, d.body, raw.createdAt, raw.createdAt, now));
          written.push(d);
        }
        if (targets.length > room) {
          const rest = targets.slice(room);
          writes.push(keepRest.run(rest.join(','), rest.length, raw.id));
          break;
        }
        writes.push(remove.run(raw.id));
        if (written.length >= limit) break;
      }
      await Promise.all(writes);
      return { written, fanouts: rows.length };
    },
  );

  return {
    /** Records an event for its webhooks, staged into the transaction that records the event (the tick's). */
    add(fanout: NewFanout, now = Date.now()): void {
      insert.stage(fanout.eventId, fanout.event, fanout.session, fanout.seq, fanout.timestamp, fanout.payload, fanout.webhookIds.join(','), fanout.webhookIds.length, now);
    },
    /** whether any fan-out waits to be expanded */
    any: async (): Promise<boolean> => (await any.get()) !== undefined,
    count: async (): Promise<number> => (await count.get()) as number,
    /**
     * Writes up to `limit` delivery rows from the oldest fan-outs, built by `build`, and keeps what is left of them, in
     * one transaction: the rows and what is left commit together. Webhooks deleted since are skipped.
     * Returns the rows written, and how many fan-outs were taken up (none: nothing is left, or another node has it).
     */
    expand: (limit: number, build: (fanout: Fanout, webhookId: number) => NewDelivery, now = Date.now()): Promise<{ written: NewDelivery[]; fanouts: number }> =>
      expandChunk(limit, build, now),
  };
}
