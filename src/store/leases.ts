// Repository of nodes and session leases on PostgreSQL (store.kind: postgres): which node runs each session, renewed by
// its owner, taken over once it expires, fenced by an epoch that every takeover raises. Every time is the database
// server's clock (ms), so the nodes' own clocks never decide who owns a session.
import type postgres from 'postgres';
import type { Db } from './db.js';
import type { PgSql } from './postgres.js';

export interface NodeRow {
  id: string;
  url: string;
  startedAt: number;
  heartbeatAt: number;
  /** sessions it holds a live lease on */
  sessions: number;
}

export interface LeaseRow {
  session: string;
  node: string;
  epoch: number;
  expiresAt: number;
  moveTo: string | null;
}

/** A write of a session was made under an epoch that is no longer its lease's: another node owns the session now. */
export class StaleLeaseError extends Error {
  constructor(
    readonly session: string,
    readonly epoch: number,
  ) {
    super(`session ${session}: this node's lease (epoch ${epoch}) is gone; another node owns the session now`);
    this.name = 'StaleLeaseError';
  }
}

export type LeasesRepo = ReturnType<typeof createLeasesRepo>;

/** `nodeId`: this daemon; `leaseMs`: how long a lease lasts after it is taken or renewed. */
export function createLeasesRepo(sql: PgSql, nodeId: string, leaseMs: number) {
  const now = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
  // a lease may be taken once expired (or released), never earlier, not even by the node that holds it (a restarted node
  // frees its previous run's leases first, releaseOwn); one being moved stays the target's for one more lease period
  // (then anyone's: the target may be gone)
  const takeable = sql`(session_leases.expires_at <= ${now} AND (session_leases.move_to IS NULL OR session_leases.move_to = ${nodeId}
    OR session_leases.expires_at <= ${now} - ${leaseMs}))`;

  return {
    /** Announces this node (or its restart) with the URL the others forward its sessions' requests to. */
    async registerNode(url: string): Promise<void> {
      await sql`INSERT INTO nodes (id, url, started_at, heartbeat_at) VALUES (${nodeId}, ${url}, ${now}, ${now})
        ON CONFLICT (id) DO UPDATE SET url = excluded.url, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`;
    },

    /**
     * Marks this node alive and renews the leases it runs (`held`: session and epoch; a lease it gave up is never renewed).
     * Returns the leases renewed, and those of `held` that another node was asked to take (not renewed: stop the
     * session, then `handOver`). Waits at most `lockTimeoutMs` for a row a long write transaction holds.
     */
    async heartbeat(held: ReadonlyArray<{ session: string; epoch: number }>, lockTimeoutMs: number): Promise<{ renewed: Array<{ session: string; epoch: number }>; moving: Array<{ session: string; epoch: number }> }> {
      const sessions = held.map((lease) => lease.session);
      const epochs = held.map((lease) => lease.epoch);
      return sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
        await tx`UPDATE nodes SET heartbeat_at = ${now} WHERE id = ${nodeId}`;
        const mine = tx`SELECT * FROM unnest(${sessions}::text[], ${epochs}::bigint[])`;
        const renewed = await tx<Array<{ session: string; epoch: number }>>`UPDATE session_leases SET expires_at = ${now} + ${leaseMs}
          WHERE node = ${nodeId} AND expires_at > ${now} AND move_to IS NULL AND (session, epoch) IN (${mine}) RETURNING session, epoch`;
        const moving = await tx<Array<{ session: string; epoch: number }>>`SELECT session, epoch FROM session_leases
          WHERE node = ${nodeId} AND expires_at > ${now} AND move_to IS NOT NULL AND (session, epoch) IN (${mine})`;
        return { renewed: [...renewed], moving: [...moving] };
      });
    },

    /**
     * Ends the leases still held under this node's id by its previous run (killed before it could release them): a
     * daemon starting under an id says no other process runs under it, so they are free at once, not after they expire.
     */
    async releaseOwn(): Promise<number> {
      const freed = await sql`UPDATE session_leases SET expires_at = 0 WHERE node = ${nodeId} AND expires_at > 0`;
      return freed.count;
    },

    /** Takes the lease of `session` if it is free; its new epoch, or undefined when another node holds it. */
    async acquire(session: string): Promise<number | undefined> {
      const [row] = await sql<Array<{ epoch: number }>>`INSERT INTO session_leases (session, node, epoch, expires_at)
        VALUES (${session}, ${nodeId}, 1, ${now} + ${leaseMs})
        ON CONFLICT (session) DO UPDATE SET node = excluded.node, epoch = session_leases.epoch + 1, expires_at = excluded.expires_at, move_to = NULL
        WHERE ${takeable} RETURNING epoch`;
      return row?.epoch;
    },

    /**
     * Gives up a lease this node holds (the session stopped here): any node may take it at once, under the next epoch; one
     * being moved stays reserved for its target. A lease another node took meanwhile is left alone.
     */
    async release(session: string, epoch: number): Promise<void> {
      await sql`UPDATE session_leases SET expires_at = CASE WHEN move_to IS NULL THEN 0 ELSE ${now} END
        WHERE session = ${session} AND node = ${nodeId} AND epoch = ${epoch}`;
    },

    /** Ends a lease being moved, once the session is stopped here: its target may take it at once. */
    async handOver(session: string, epoch: number): Promise<void> {
      await sql`UPDATE session_leases SET expires_at = ${now} WHERE session = ${session} AND node = ${nodeId} AND epoch = ${epoch}`;
    },

    /**
     * Asks the owner of `session` to hand it to node `target`; false when no node holds it, the target already does, or
     * the target's last heartbeat is older than a lease (it is not running).
     */
    async requestMove(session: string, target: string): Promise<boolean> {
      const asked = await sql`UPDATE session_leases SET move_to = ${target}
        WHERE session = ${session} AND expires_at > ${now} AND node <> ${target}
        AND EXISTS (SELECT 1 FROM nodes WHERE id = ${target} AND heartbeat_at > ${now} - ${leaseMs})`;
      return asked.count > 0;
    },

    /**
     * Inside a write transaction of `session`: throws StaleLeaseError unless this node still holds its lease under
     * `epoch`. The row stays share-locked until the transaction ends, so no takeover commits in between; this node's own
     * renewal waits for it too, so a fenced transaction must end well within the lease's margin.
     */
    async fence(tx: postgres.TransactionSql, session: string, epoch: number): Promise<void> {
      const held = await tx`SELECT 1 FROM session_leases WHERE session = ${session} AND node = ${nodeId} AND epoch = ${epoch}
        AND expires_at > ${now} FOR SHARE`;
      if (held.count === 0) throw new StaleLeaseError(session, epoch);
    },

    /** Sessions being moved to this node whose owner handed them over, by name. */
    async movingHere(): Promise<string[]> {
      const rows = await sql<Array<{ session: string }>>`SELECT session FROM session_leases
        WHERE move_to = ${nodeId} AND expires_at <= ${now} ORDER BY session`;
      return rows.map((row) => row.session);
    },

    /** Sessions that should run and that no node holds (or that are moving to this node), by name. */
    async orphans(limit: number): Promise<string[]> {
      const rows = await sql<Array<{ name: string }>>`SELECT s.name FROM sessions s LEFT JOIN session_leases ON session_leases.session = s.name
        WHERE s.should_run = 1 AND (session_leases.session IS NULL OR ${takeable}) ORDER BY s.name LIMIT ${limit}`;
      return rows.map((row) => row.name);
    },

    /** Nodes whose heartbeat is more recent than `staleMs`, with how many sessions each holds. */
    async liveNodes(staleMs: number): Promise<NodeRow[]> {
      return [
        ...(await sql<NodeRow[]>`SELECT id, url, started_at AS "startedAt", heartbeat_at AS "heartbeatAt",
          (SELECT COUNT(*)::int FROM session_leases WHERE node = nodes.id AND expires_at > ${now}) AS sessions
          FROM nodes WHERE heartbeat_at > ${now} - ${staleMs} ORDER BY id`),
      ];
    },

    /** The node holding a live lease on `session`, with the URL it is reached at; undefined when none does. */
    async owner(session: string): Promise<{ node: string; url: string } | undefined> {
      const [row] = await sql<Array<{ node: string; url: string }>>`SELECT l.node, n.url FROM session_leases l JOIN nodes n ON n.id = l.node
        WHERE l.session = ${session} AND l.expires_at > ${now}`;
      return row ? { node: row.node, url: row.url } : undefined;
    },

    /** Every live lease: which node runs which session. */
    async liveLeases(): Promise<Array<{ session: string; node: string }>> {
      return [...(await sql<Array<{ session: string; node: string }>>`SELECT session, node FROM session_leases WHERE expires_at > ${now} ORDER BY session`)];
    },

    /** The lease of one session, live, expired or released; undefined when none was ever taken. */
    async lease(session: string): Promise<LeaseRow | undefined> {
      const [row] = await sql<LeaseRow[]>`SELECT session, node, epoch, expires_at AS "expiresAt", move_to AS "moveTo"
        FROM session_leases WHERE session = ${session}`;
      return row;
    },
  };
}

/**
 * The fence of a session's writes made through the store (credentials, Signal keys): inside their transaction, throws
 * StaleLeaseError unless the session runs here under `epochOf(session)`, its live lease, or runs nowhere (a stopped
 * session's credentials cleared by a logout) and this node thinks so too. The lease row stays share-locked until that
 * transaction ends, so no takeover commits in between.
 */
export function createLeaseFence(db: Db, nodeId: string, epochOf: (session: string) => number | undefined): (session: string) => Promise<StaleLeaseError | undefined> {
  const live = db.prepare<{ node: string; epoch: number }>(`SELECT node, epoch FROM session_leases WHERE session = ? AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint FOR SHARE`);
  return async (session) => {
    const epoch = epochOf(session);
    const lease = await live.get(session);
    const fenced = lease ? lease.node !== nodeId || lease.epoch !== epoch : epoch !== undefined;
    return fenced ? new StaleLeaseError(session, epoch ?? 0) : undefined;
  };
}
