// This daemon as one node of several on one PostgreSQL database (store.kind: postgres): it announces itself, takes the
// leases of the sessions it runs and keeps them (LeaseKeeper), picks up its fair share of the sessions no node runs (a
// node died, or let them go), stops a session the moment its lease may no longer be its own, and knows which node runs
// any session, for the forwarding of requests (forward.ts).
import { hostname } from 'node:os';
import type { Logger } from '../logger.js';
import type { LeasesRepo, NodeRow } from '../store/leases.js';
import type { PgDb } from '../store/pg-db.js';
import { createLeasesRepo } from '../store/leases.js';
import { withPostgresErrors } from '../store/pg-errors.js';
import { LeaseKeeper } from './lease-keeper.js';
import { GatewayError } from '../errors.js';

export interface ClusterStatus {
  node: string;
  leaseSeconds: number;
  nodes: Array<{ id: string; url: string; startedAt: string; heartbeatAt: string; sessions: string[] }>;
}

/** The channel every node's live events travel on (event-relay.ts). */
export const EVENTS_CHANNEL = 'gateway_events';

/** Where sessions run: on one daemon, always here; in a cluster, on the node holding the session's lease. */
export interface SessionPlacement {
  /** takes the session for this node before it starts here; false when another node runs it */
  claim(session: string): Promise<boolean>;
  /** gives the session up once it stopped here (any node may take it at once) */
  release(session: string): Promise<void>;
  /** the epoch a write of the session must be fenced with; undefined when this node does not hold it */
  epochOf(session: string): number | undefined;
}

/** What the cluster needs from the sessions: how many should run, and to start or drop one. */
export interface ClusteredSessions {
  /** starts a session another node let go (or lost), from its stored credentials */
  adopt(session: string): Promise<void>;
  /** stops a session here without recording anything: its lease is gone, another node owns it now */
  relinquish(session: string): Promise<void>;
  /** sessions that should run, on any node */
  shouldRunCount(): Promise<number>;
}

export interface ClusterOptions {
  db: PgDb;
  nodeId: string;
  leaseMs: number;
  logger: Logger;
  /** told of every other node's event (event-relay.ts) */
  onNotification(payload: string): void;
  /** told each time this node starts listening to the others (again): what it caches must be read again */
  onListening(): void;
}

export class Cluster implements SessionPlacement {
  readonly leases: LeasesRepo;
  readonly keeper: LeaseKeeper;
  private sessions: ClusteredSessions | undefined;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private rebalancing: Promise<void> | undefined;
  private advertiseUrl = '';

  constructor(private readonly options: ClusterOptions) {
    this.leases = withPostgresErrors(createLeasesRepo(options.db.side, options.nodeId, options.leaseMs));
    this.keeper = new LeaseKeeper({
      repo: this.leases,
      leaseMs: options.leaseMs,
      // an answer within a tenth of the lease is recent enough: a renewal after it keeps the sessions at most that much
      // past the main connection's last answer, well within the lease
      probe: (timeoutMs) => options.db.probe(timeoutMs, options.leaseMs / 10),
      onLost: async (session, reason) => {
        options.logger.warn({ session, reason }, 'lease lost: the session stops here, another node takes it');
        await this.sessions?.relinquish(session);
      },
      onError: (err) => options.logger.error({ err }, 'could not renew the session leases'),
    });
  }

  get nodeId(): string {
    return this.options.nodeId;
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Joins, reachable at `advertiseUrl`: the side connections and the event channel, this node's row, the lease renewals. */
  async join(advertiseUrl: string): Promise<void> {
    this.advertiseUrl = advertiseUrl;
    if (/^https?:\/\/(0\.0\.0\.0|\[::\])[:/]/.test(advertiseUrl)) {
      this.options.logger.warn({ advertiseUrl }, 'other nodes cannot reach a wildcard address: set cluster.advertiseUrl (GATEWAY_ADVERTISE_URL) to this host\'s address');
    }
    await this.options.db.listen(EVENTS_CHANNEL, this.options.onNotification, this.options.onListening);
    await this.leases.registerNode(advertiseUrl);
    this.keeper.start();
  }

  /**
   * Frees the leases this node's previous run held (killed before it could release them). Before the daemon listens: a
   * session started by the first requests must not have its new lease freed with them.
   */
  async freePreviousRun(): Promise<void> {
    const freed = await this.leases.releaseOwn();
    if (freed) this.options.logger.info({ sessions: freed }, "freed the leases this node's previous run held");
  }

  /** Starts taking this node's share of the sessions no node runs, now and every renewal period. */
  run(sessions: ClusteredSessions): Promise<void> {
    this.sessions = sessions;
    this.rebalanceTimer = setInterval(() => void this.rebalance(), Math.max(500, Math.floor(this.options.leaseMs / 3)));
    this.rebalanceTimer.unref();
    return this.rebalance();
  }

  /** Stops taking sessions; the leases still held are released by the sessions' shutdown (SessionPlacement.release). */
  leave(): void {
    clearInterval(this.rebalanceTimer);
    this.rebalanceTimer = undefined;
    this.keeper.stop();
  }

  async claim(session: string): Promise<boolean> {
    return (await this.keeper.acquire(session)) !== undefined;
  }

  release(session: string): Promise<void> {
    return this.keeper.release(session);
  }

  epochOf(session: string): number | undefined {
    return this.keeper.epochOf(session);
  }

  /** The nodes alive now (a heartbeat within a lease), with how many sessions each runs. */
  private liveNodes(): Promise<NodeRow[]> {
    return this.leases.liveNodes(this.options.leaseMs);
  }

  /** The node that runs `session` now and its URL; undefined when none does (stopped, or its node died and the lease ran out). */
  async ownerOf(session: string): Promise<{ node: string; url: string } | undefined> {
    if (this.keeper.epochOf(session) !== undefined) return { node: this.options.nodeId, url: this.advertiseUrl };
    const owner = await this.leases.owner(session);
    // a lease under this node's id that the keeper does not hold is a previous run's: it runs nowhere
    return owner && owner.node !== this.options.nodeId ? owner : undefined;
  }

  /** The nodes alive now and the sessions each runs (`gateway cluster status`). */
  async status(): Promise<ClusterStatus> {
    const [nodes, leases] = await Promise.all([this.liveNodes(), this.leases.liveLeases()]);
    return {
      node: this.options.nodeId,
      leaseSeconds: this.options.leaseMs / 1000,
      nodes: nodes.map((node) => ({
        id: node.id,
        url: node.url,
        startedAt: new Date(node.startedAt).toISOString(),
        heartbeatAt: new Date(node.heartbeatAt).toISOString(),
        sessions: leases.filter((lease) => lease.node === node.id).map((lease) => lease.session),
      })),
    };
  }

  /**
   * Moves a running session to node `target` on purpose: its owner stops it at its next renewal and hands it over, and
   * the target starts it (from the stored credentials, as after a failover).
   */
  async move(session: string, target: string): Promise<void> {
    const nodes = await this.liveNodes();
    if (!nodes.some((node) => node.id === target)) throw new GatewayError('NODE_NOT_FOUND', `no live node ${target}; \`gateway cluster status\` lists them`);
    const owner = await this.leases.owner(session);
    if (!owner) throw new GatewayError('SESSION_NOT_STARTED', `session ${session} runs on no node; start it (it starts on the least-loaded node)`);
    if (owner.node === target) return;
    if (!(await this.leases.requestMove(session, target))) throw new GatewayError('SESSION_NOT_STARTED', `session ${session} stopped meanwhile`);
    // the owner hands it over at its next renewal, the target takes it at its next look for sessions; sooner if it is here
    if (owner.node === this.options.nodeId) await this.keeper.renew();
  }

  /** The live node running the fewest sessions (ties: by id), where a new session should start. */
  async leastLoaded(): Promise<{ node: string; url: string }> {
    const nodes = await this.liveNodes();
    const least = [...nodes].sort((a, b) => a.sessions - b.sessions || a.id.localeCompare(b.id))[0];
    return least ? { node: least.id, url: least.url } : { node: this.options.nodeId, url: this.advertiseUrl };
  }

  private rebalance(): Promise<void> {
    return (this.rebalancing ??= this.adoptOrphans()
      .catch((err: unknown) => this.options.logger.error({ err }, 'could not look for sessions without a node'))
      .finally(() => (this.rebalancing = undefined)));
  }

  /** Adopts the sessions moved to this node, and those that should run and that no node holds, up to its fair share. */
  private async adoptOrphans(): Promise<void> {
    const sessions = this.sessions;
    if (!sessions) return;
    // a move asked for by the operator is not held back by the share
    const incoming = await this.leases.movingHere();
    await Promise.all(incoming.map((session) => sessions.adopt(session).catch((err: unknown) => this.options.logger.error({ err, session }, 'could not take a session moved here'))));
    const nodes = Math.max(1, (await this.liveNodes()).length);
    const share = Math.ceil((await sessions.shouldRunCount()) / nodes);
    const room = share - this.keeper.heldCount();
    if (room <= 0) return;
    const orphans = await this.leases.orphans(room);
    if (orphans.length) this.options.logger.info({ sessions: orphans.length }, 'adopting sessions no node runs');
    await Promise.all(orphans.map((session) => sessions.adopt(session).catch((err: unknown) => this.options.logger.error({ err, session }, 'could not adopt a session'))));
  }
}

/** This node's id: cluster.nodeId, or the host name and port (two daemons on one host differ by port). */
export function defaultNodeId(port: number): string {
  return `${hostname().replace(/[^A-Za-z0-9._-]/g, '-')}-${port}`;
}
