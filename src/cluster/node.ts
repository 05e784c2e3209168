// This daemon's part in a cluster (store.kind: postgres), put together: the leases (Cluster), the fence on credential
// writes, the claims on the shared outbox, the forwarding of requests, and the channel on which nodes share their events
// and tell each other what changed in what they cache. The daemon wires these into its services; on SQLite there is none.
import { ConfigError } from '../config/load.js';
import type { GatewayConfig } from '../config/types.js';
import type { GatewayEvent } from '../events/catalogue.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { createLeaseFence, type StaleLeaseError } from '../store/leases.js';
import { createNotifier } from '../store/notify.js';
import type { DeliveryClaims } from '../store/outbox.js';
import type { PgDb } from '../store/pg-db.js';
import { Cluster, defaultNodeId, EVENTS_CHANNEL } from './cluster.js';
import { createAssembler, encodeMessage, type RelayMessage } from './event-relay.js';
import { createForwarder, type Forwarder } from './forward.js';

/** What cached state another node can change: each node reads it again when told. */
const CHANGE_TOPICS = ['keys', 'webhooks', 'settings'] as const;
export type ChangeTopic = (typeof CHANGE_TOPICS)[number];
/** how soon a cache that could not be read again is tried again */
const CACHE_RETRY_MS = 1000;

/** How this node claims deliveries in the shared outbox: for an attempt's longest time and room to record its outcome. */
export function deliveryClaimsOf(config: GatewayConfig): DeliveryClaims {
  return { nodeId: nodeIdOf(config), claimMs: config.webhooks.timeoutMs + 5000, perWebhook: config.webhooks.perWebhookConcurrency };
}

const nodeIdOf = (config: GatewayConfig) => config.cluster.nodeId ?? defaultNodeId(config.port);

export interface ClusterNode {
  cluster: Cluster;
  /** inside a credential write's transaction: the refusal to write when this node no longer holds the session's lease */
  fence(session: string): Promise<StaleLeaseError | undefined>;
  forwarder: Forwarder;
  /** an event recorded here, for the other nodes' live streams (in the transaction that records it) */
  publishEvent(event: GatewayEvent): void;
  /** tells the other nodes that `topic` changed (in the transaction of the change) */
  announce(topic: ChangeTopic, ids?: string[]): void;
  /** what to do with another node's events, and with its changes of each topic */
  listen(onEvent: (event: GatewayEvent) => void, onChanged: (topic: ChangeTopic, ids: string[]) => Promise<void> | void): void;
}

export function createClusterNode(config: GatewayConfig, db: Db, logger: Logger, beginWrite: () => void): ClusterNode {
  const nodeId = nodeIdOf(config);
  const leaseMs = config.cluster.leaseSeconds * 1000;
  let onEvent: (event: GatewayEvent) => void = () => {};
  let onChanged: (topic: ChangeTopic, ids: string[]) => Promise<void> | void = () => {};
  /** topics whose cache could not be read again (the store was out of reach), retried until it is */
  const stale = new Set<ChangeTopic>();
  let retry: NodeJS.Timeout | undefined;
  const reload = async (topic: ChangeTopic, ids: string[]): Promise<void> => {
    try {
      await onChanged(topic, ids);
      if (ids.length === 0) stale.delete(topic);
    } catch (err) {
      logger.error({ err, topic }, 'could not read a changed cache again; retrying');
      stale.add(topic);
      retry ??= setTimeout(() => {
        retry = undefined;
        for (const topic of [...stale]) void reload(topic, []);
      }, CACHE_RETRY_MS);
      retry.unref();
    }
  };
  const assemble = createAssembler(nodeId, (message: RelayMessage) => {
    if (message.kind === 'changed') return void reload(message.topic as ChangeTopic, message.ids ?? []);
    try {
      onEvent(message.event as GatewayEvent);
    } catch (err) {
      logger.error({ err }, "could not relay another node's event");
    }
  });
  // everything cached is read again whenever the channel (re)starts: changes sent before it listened were not heard
  const refreshAll = () => {
    for (const topic of CHANGE_TOPICS) void reload(topic, []);
  };
  const pg = db as PgDb;
  pg.onConnectionLost = (err) => logger.error({ err }, 'the connection to PostgreSQL was lost with a transaction open; its writes were not kept');
  const cluster = new Cluster({ db: pg, nodeId, leaseMs, logger, onNotification: (payload) => {
    try {
      assemble(payload);
    } catch (err) {
      logger.error({ err }, 'could not read a message of another node');
    }
  }, onListening: refreshAll });
  const notify = createNotifier(db, EVENTS_CHANNEL);
  // the hop between nodes is signed with the cluster secret, which the configuration requires (config/load.ts)
  if (!config.cluster.secret) throw new ConfigError('cluster.secret (GATEWAY_CLUSTER_SECRET) is required when store.kind is postgres');
  const secret = Buffer.from(config.cluster.secret, 'utf8');
  return {
    cluster,
    fence: createLeaseFence(db, nodeId, (session) => cluster.epochOf(session)),
    forwarder: createForwarder(cluster, { secret, logger: logger.child({ module: 'forward' }), bodyLimits: { defaultBytes: config.server.bodyLimitBytes, mediaBytes: config.server.mediaBodyLimitBytes } }),
    publishEvent: (event) => notify(encodeMessage(nodeId, { kind: 'event', event })),
    announce(topic, ids) {
      beginWrite();
      notify(encodeMessage(nodeId, { kind: 'changed', topic, ...(ids ? { ids } : {}) }));
    },
    listen(events, changes) {
      onEvent = events;
      onChanged = changes;
    },
  };
}
