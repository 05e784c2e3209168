// The composition root: wires config, store, engines, sessions, events and HTTP, and shuts them down in reverse, once.
import { createServer, type RequestListener, type Server } from 'node:http';
import { answerClientError, answerConnectWith } from './http/client-error.js';
import { capConnectionsPerAddress } from './http/connection-cap.js';
import type { AddressInfo } from 'node:net';
import type { PassThrough } from 'node:stream';
import { join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { ApiKeys } from './auth/api-keys.js';
import type { GatewayConfig } from './config/types.js';
import { createEngines } from './engine/index.js';
import { CallsService } from './calls/service.js';
import { EventBus } from './events/bus.js';
import { EventLog, numberingAfterClaim } from './events/log.js';
import { createEventLogRepo } from './store/event-log.js';
import { createChatsRepo } from './store/chats.js';
import { ChatList } from './chats/chat-list.js';
import { MessageHistory } from './messages/history.js';
import { HistoryBackfill } from './messages/backfill.js';
import { MessageRetention } from './messages/retention.js';
import { startSearchIndexer } from './messages/search-indexer.js';
import { createIdempotencyRepo } from './store/idempotency.js';
import { IdempotentRequests } from './http/idempotency.js';
import { createSendQueueRepo } from './store/send-queue.js';
import { FirstContacts, Pacer } from './messages/governor.js';
import { SendQueue } from './messages/send-queue.js';
import { createApp } from './http/app.js';
import { allRoutes } from './http/routes/index.js';
import type { Services } from './http/services.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { SessionManager } from './sessions/manager.js';
import { createAuthStateRepo } from './store/auth-state.js';
import { createTickTransaction, type SqliteDb } from './store/db.js';
import { TickAbortedError } from './store/sql.js';
import { openStore, StoreOpenError } from './store/open-store.js';
import { startCheckpointer } from './store/checkpointer.js';
import { createClusterNode, deliveryClaimsOf } from './cluster/node.js';
import { createKeysRepo } from './store/keys.js';
import { createSessionsRepo } from './store/sessions.js';
import { createIdentitiesRepo } from './store/identities.js';
import { VERSION } from './version.js';
import { BlobStore } from './media/blob-store.js';
import { ByteBudget, FetchLimiter } from './media/fetch-limiter.js';
import { MediaRecords } from './media/records.js';
import { createMessageIngest } from './messages/ingest.js';
import { createMessageLookup } from './messages/lookup.js';
import { MessagingService } from './messages/service.js';
import { createMediaRepo } from './store/media.js';
import { createMessagesRepo } from './store/messages.js';
import { createMessageActivityRepo } from './store/message-activity.js';
import { lazyGuardedDispatcher } from './net/url-guard.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { createOutbox } from './webhooks/outbox.js';
import { FanoutExpander } from './webhooks/fanout.js';
import { WebhookRegistry } from './webhooks/registry.js';
import { createOutboxRepo } from './store/outbox.js';
import { createActivityRepo } from './store/activity.js';
import { createFanoutsRepo } from './store/fanouts.js';
import { createWebhooksRepo } from './store/webhooks.js';
import { ClientRules } from './auth/client-rules.js';
import { ClientTokens } from './auth/client-tokens.js';
import { sha256 } from './auth/secrets.js';
import { secretBoxFor, SecretBoxError } from './auth/secret-box.js';
import { ConfigError } from './config/load.js';
import { checkSealedKey, compactAfterRewrite, sealPlaintextRows } from './store/sealed-columns.js';
import { createClientRulesRepo } from './store/client-rules.js';
import { createSettingsRepo } from './store/settings.js';
import { sessionOf } from './http/router.js';
import { clientCors } from './http/middleware/client-cors.js';
import { RuntimeSettingsStore } from './config/runtime-settings.js';
import { MediaService } from './media/service.js';
import { GatewayError } from './errors.js';
import { ChannelsService } from './chats/channels.js';
import { ContactsService } from './chats/contacts.js';
import { IdentityService } from './chats/identities.js';
import { ProfileService } from './chats/profile.js';
import { GroupsService } from './chats/groups.js';
import { createChatIngest } from './chats/ingest.js';
import { LabelsService } from './chats/labels.js';
import { PresenceService } from './chats/presence.js';
import { createChannelsRepo } from './store/channels.js';
import { createContactsRepo } from './store/contacts.js';
import { createLabelsRepo } from './store/labels.js';
import { AuditLog } from './audit/log.js';
import { createAuditRepo } from './store/audit.js';
import { createPresenceRepo } from './store/presence.js';
import { Backups, recordRestore, scheduleInterval } from './ops/backups.js';
import { operationsStatus } from './ops/status.js';
import { recentActivity } from './ops/activity.js';

export interface Daemon {
  url: string;
  port: number;
  logger: Logger;
  services: Services;
  /** graceful shutdown: refuse new requests, finish in-flight ones, close sessions and the store; runs once */
  close(): Promise<void>;
}

export async function startDaemon(config: GatewayConfig, options: { logger?: Logger } = {}): Promise<Daemon> {
  const masterKey = config.auth.masterKey;
  if (!masterKey) throw new GatewayError('VALIDATION_FAILED', 'no master key: set GATEWAY_MASTER_KEY or auth.masterKey (run `gateway init`)');
  const logger = options.logger ?? createLogger(config.logLevel);
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  let box;
  try {
    box = secretBoxFor(config.auth);
  } catch (err) {
    if (err instanceof SecretBoxError) throw new ConfigError(err.message);
    throw err;
  }
  let store;
  try {
    store = await openStore(config, dataDir);
  } catch (err) {
    if (err instanceof StoreOpenError) throw new ConfigError(err.message);
    throw err;
  }
  const { db } = store;
  const mismatch = await checkSealedKey(db, box);
  if (mismatch) {
    await db.close();
    throw new ConfigError(
      `the secrets in ${store.location} were sealed under data key ${mismatch.storedKeyId}, not under this one (${box.keyId}): ` +
        (config.auth.encryptionKey
          ? 'GATEWAY_ENCRYPTION_KEY (auth.encryptionKey) is not the key this database was written with'
          : 'the master key changed without `gateway rotate-master-key`; start with the previous master key, then rotate it'),
    );
  }
  const sealed = await sealPlaintextRows(db, box);
  if (Object.keys(sealed).length) {
    compactAfterRewrite(db);
    logger.info({ sealed, keyId: box.keyId }, 'sealed the secrets an earlier version stored in plaintext');
  }
  const checkpoints = store.file && db.dialect === 'sqlite' ? startCheckpointer((db as SqliteDb).sqlite, store.file, logger.child({ module: 'store' })) : undefined;
  // on PostgreSQL this daemon is a node of a cluster (a cluster of one until others start): src/cluster
  const clustered = store.kind === 'postgres';
  const sessionsRepo = createSessionsRepo(db, box, { shared: clustered });
  const outboxRepo = createOutboxRepo(db, clustered ? deliveryClaimsOf(config) : undefined);
  const metrics = createMetrics({
    sessionCounts: () => sessionsRepo.counts(),
    sessionStates: () => sessionsRepo.countByState(),
    webhookBacklog: () => outboxRepo.backlog(),
    degradedSessions: () => sessions.degradedCount(),
  });
  let afterLostTick = (): void => {};
  const tick = createTickTransaction(
    db,
    (err) => {
      if (err instanceof TickAbortedError) logger.warn({ err }, "a store transaction failed inside a tick: the tick's writes are rolled back and the requests waiting on them answered 503");
      else logger.error({ err }, "could not commit one tick's writes; they are lost and the requests waiting on them answered with the error");
      // writes nobody waits for may have been among them
      afterLostTick();
    },
    metrics.observeCommit,
  );
  const node = clustered ? createClusterNode(config, db, logger.child({ module: 'cluster' }), tick.join) : undefined;
  const eventLog = new EventLog(createEventLogRepo(db), tick);
  await eventLog.open();
  const bus = new EventBus(tick.join, (session) => eventLog.next(session));
  bus.addPersister(eventLog.persist);
  const engines = createEngines(config, logger.child({ module: 'engine' }));
  const urlPolicy = { allowPrivateTargets: config.webhooks.allowPrivateTargets };
  const identitiesRepo = createIdentitiesRepo(db);
  const sessions = new SessionManager({
    sessions: sessionsRepo,
    authState: createAuthStateRepo(db, box, tick.flush, node?.fence, tick.join),
    identities: identitiesRepo,
    engines,
    bus,
    logger: logger.child({ module: 'sessions' }),
    settings: config.sessions,
    defaultEngine: config.engine.default,
    urlPolicy,
    placement: node && numberingAfterClaim(node.cluster, eventLog),
    ticks: tick,
  });
  const apiKeys = new ApiKeys(createKeysRepo(db));
  const messagesRepo = createMessagesRepo(db, box);
  const messageActivity = createMessageActivityRepo(db);
  const media = await MediaRecords.open(
    createMediaRepo(db, box),
    new BlobStore(join(dataDir, 'media'), { maxBytes: config.media.localCacheMaxBytes }),
    logger.child({ module: 'media' }),
  );
  sessions.addEventProcessor(() => tick.join());
  sessions.addEventProcessor(createMessageIngest(messagesRepo, media, messageActivity));
  sessions.setMessageLookup(createMessageLookup(messagesRepo), (session, id) => messagesRepo.existsById(session, id));
  const settingsRepo = createSettingsRepo(db, box);
  const runtimeSettings = await RuntimeSettingsStore.open(settingsRepo);
  if (node) runtimeSettings.changedHere = () => node.announce('settings');
  const mediaService = new MediaService({
    records: media,
    sessions,
    settings: runtimeSettings,
    logger: logger.child({ module: 'media' }),
    s3Connection: { connectTimeoutMs: config.media.s3ConnectTimeoutMs, requestTimeoutMs: config.media.s3RequestTimeoutMs, allowPrivateEndpoint: config.media.s3AllowPrivateEndpoint },
    autoPersistTimeoutMs: config.media.autoPersistTimeoutMs,
  });
  sessions.addEventProcessor(mediaService.autoPersist());
  // media URLs have their own opt-in (webhooks.allowPrivateTargets no longer opens them); client tokens never get it
  const fetchLimiter = new FetchLimiter(config.media.urlFetchConcurrency, config.media.urlFetchQueue, config.media.urlFetchPerKey);
  const mediaUrlPolicy = { allowPrivateTargets: config.media.allowPrivateUrls };
  const mediaSource = { urlPolicy: mediaUrlPolicy, dispatcher: lazyGuardedDispatcher(mediaUrlPolicy), limiter: fetchLimiter };
  const publicOnly = { allowPrivateTargets: false };
  const clientMediaSource = config.media.allowPrivateUrls ? { urlPolicy: publicOnly, dispatcher: lazyGuardedDispatcher(publicOnly), limiter: fetchLimiter } : mediaSource;
  const webhooks = new WebhookRegistry({ webhooks: createWebhooksRepo(db, box), outbox: outboxRepo, urlPolicy, maxWebhooks: config.webhooks.maxWebhooks, maxWebhooksPerKey: config.webhooks.maxWebhooksPerKey });
  // the enabled webhooks are cached before the first event can be persisted against them
  await webhooks.reload();
  // what was granted on the name goes before the delete is answered: the manager awaits its listeners
  sessions.onDeleted(async (name) => {
    await webhooks.deleteForSession(name);
    await apiKeys.forgetSession(name);
    messaging.forget(name);
  });
  const webhookHttp = lazyGuardedDispatcher(urlPolicy, { connectTimeoutMs: config.webhooks.timeoutMs });
  const webhookLogger = logger.child({ module: 'webhooks' });
  const dispatcher = new WebhookDispatcher({ outbox: outboxRepo, registry: webhooks, box, http: webhookHttp, settings: config.webhooks, logger: webhookLogger, beginWrite: tick.join, onOutcome: metrics.observeAttempt });
  // undici is loaded once there are webhooks to deliver to, not on the first event (often one of a burst)
  webhooks.onChange((change) => change.type === 'created' && webhookHttp.preload());
  const fanout = new FanoutExpander({ fanouts: createFanoutsRepo(db), beginWrite: tick.join, onWritten: (rows) => dispatcher.notify(rows), logger: webhookLogger });
  bus.addPersister(createOutbox({ registry: webhooks, outbox: outboxRepo, box, onWritten: (rows) => dispatcher.notify(rows), fanout }));
  if (node) {
    bus.addPersister(node.publishEvent);
    apiKeys.revokedHere = (ids) => node.announce('keys', ids);
    webhooks.onChange(() => node.announce('webhooks'));
    node.listen(
      (event) => {
        bus.relay(event);
        eventLog.relayed(event);
      },
      (topic, ids) => (topic === 'keys' ? apiKeys.revokedElsewhere(ids) : topic === 'webhooks' ? webhooks.reload() : runtimeSettings.reload()),
    );
  }
  const chatStores = { contacts: createContactsRepo(db), presence: createPresenceRepo(db), channels: createChannelsRepo(db), labels: createLabelsRepo(db), chats: createChatsRepo(db) };
  afterLostTick = () => {
    sessions.rewriteStatuses();
    messagesRepo.forgetRecentWrites();
    chatStores.contacts.forgetRecentWrites();
  };
  const sendQueueRepo = createSendQueueRepo(db);
  const pacer = new Pacer();
  const firstContacts = new FirstContacts((session, since) => sendQueueRepo.firstContactsSince(session, since));
  const sendQueue = new SendQueue({
    repo: sendQueueRepo,
    committed: () => tick.committed(),
    deliver: (entry, recorded) => messaging.sendQueued(entry, recorded),
    sentBefore: (entry) => messaging.sentBefore(entry),
    policy: (session) => messaging.policy(session),
    dropped: (entry) => messaging.releaseFirstContact(entry.session, entry.chatId),
    sendsHere: (session) => sessions.connectedOrNone(session).then(Boolean, () => false),
    pacer,
    bus,
    logger: logger.child({ module: 'send-queue' }),
    limits: { maxEntries: config.governor.queueMaxEntries, maxBytes: config.governor.queueMaxBytes },
  });
  const messaging = new MessagingService({
    sessions,
    messages: messagesRepo,
    activity: messageActivity,
    media,
    contacts: chatStores.contacts,
    identities: identitiesRepo,
    bus,
    mediaSource,
    clientMediaSource,
    asyncBudget: new ByteBudget(config.messages.asyncMaxQueuedBytes, 'accepted async sends'),
    beginWrite: tick.join,
    logger: logger.child({ module: 'messages' }),
    governor: { settings: config.governor, pacer, firstContacts, queue: sendQueue, queueRepo: sendQueueRepo },
  });
  sessions.addEventProcessor(createChatIngest(chatStores));
  const calls = new CallsService({ sessions, messaging, logger: logger.child({ module: 'calls' }) });
  calls.attach(bus);
  const backfill = new HistoryBackfill({ sessions, messages: messagesRepo, contacts: chatStores.contacts, identities: identitiesRepo, chats: chatStores.chats });
  sessions.addEventProcessor(backfill.answered());
  const presence = new PresenceService({ sessions, presence: chatStores.presence, contacts: chatStores.contacts, logger: logger.child({ module: 'presence' }) });
  sessions.addEventProcessor(presence.resubscriber());
  const retention = new MessageRetention({ messages: messagesRepo, media: mediaService, retentionDays: config.messages.retentionDays, logger: logger.child({ module: 'retention' }) });
  const pruneOldMessages = () => void retention.prune().catch((err: unknown) => logger.error({ err }, 'could not prune old messages'));
  const pruneMessages = setInterval(pruneOldMessages, 3_600_000);
  pruneMessages.unref();
  if (retention.enabled) setImmediate(pruneOldMessages);
  const searchIndexer = startSearchIndexer(messagesRepo, logger.child({ module: 'search' }));
  const idempotency = new IdempotentRequests(createIdempotencyRepo(db), () => tick.committed());
  const pruneEvents = setInterval(() => {
    void (async () => eventLog.pruneOlderThan(Date.now() - config.events.retentionDays * 86_400_000))().catch((err: unknown) =>
      logger.error({ err }, 'could not prune old events'),
    );
    void idempotency.pruneExpired().catch((err: unknown) => logger.error({ err }, 'could not prune expired idempotency keys'));
    // the first contacts of two days ago no longer count towards any day's cap
    void sendQueueRepo.pruneSent(Date.now() - 2 * 86_400_000).catch((err: unknown) => logger.error({ err }, 'could not prune counted first contacts'));
  }, 3_600_000);
  pruneEvents.unref();
  const backups = new Backups({ dbFile: store.file, dataDir, mediaDir: join(dataDir, 'media'), logger: logger.child({ module: 'backups' }), audit: (entry) => audit.record(entry) });
  const startedAt = Date.now();
  const activityRepo = createActivityRepo(db);
  const audit = new AuditLog({ repo: createAuditRepo(db), beginWrite: tick.join, retentionDays: config.audit.retentionDays, logger: logger.child({ module: 'audit' }) });
  const clientRulesRepo = createClientRulesRepo(db);
  const clientTokens = await ClientTokens.open(settingsRepo, (session) => clientRulesRepo.tokenEpoch(session));
  const clientRules = new ClientRules(clientRulesRepo, (session, jid) => messaging.hasWrittenTo(session, jid), config.clientTokens.rateWindowSeconds);
  const services: Services = {
    config,
    version: VERSION,
    startedAt,
    sessions,
    apiKeys,
    bus,
    eventLog,
    messaging,
    media,
    mediaSource,
    clientTokens,
    clientRules,
    mediaService,
    runtimeSettings,
    webhooks,
    audit,
    groups: new GroupsService({ sessions, mediaSource }),
    channels: new ChannelsService({ sessions, channels: chatStores.channels, mediaSource }),
    presence,
    chatList: new ChatList({ sessions, chats: chatStores.chats, contacts: chatStores.contacts, identities: identitiesRepo, lookupMessage: createMessageLookup(messagesRepo) }),
    history: new MessageHistory({ sessions, messages: messagesRepo, activity: messageActivity, media: media.repo, contacts: chatStores.contacts, identities: identitiesRepo, chats: chatStores.chats }),
    backfill,
    contacts: new ContactsService({ sessions, contacts: chatStores.contacts }),
    identities: new IdentityService({ sessions, identities: identitiesRepo, contacts: chatStores.contacts }),
    profile: new ProfileService({ sessions, mediaSource }),
    labels: new LabelsService({ sessions, labels: chatStores.labels }),
    calls,
    cluster: node?.cluster,
    operations: {
      backups,
      status: () =>
        operationsStatus({ version: VERSION, startedAt, store, sessions: sessionsRepo, outbox: outboxRepo, webhooks, media: mediaService, backups, backupSchedule: config.backup.schedule }),
      activity: (window) => recentActivity(activityRepo, webhooks, window),
    },
  };
  bus.subscribe(metrics.observeEvent);
  sessions.onReconnecting(metrics.observeReconnect);
  sessions.onDecryption(metrics.observeDecryption);
  sessions.onDeleted(metrics.forgetSession);
  sessions.onHealth(metrics.observeHealth);

  let draining = false;
  /** open event streams, ended at shutdown so they do not hold the server open */
  const eventStreams = new Set<PassThrough>();
  const app = createApp({
    routes: allRoutes(services, metrics, eventStreams),
    auth: { masterKeyDigest: sha256(masterKey), apiKeys, clientToken: (token) => clientTokens.principal(token) },
    clientGuard: {
      admit: async (principal, route, ctx) => {
        await clientRules.admit(principal, {
          method: route.method,
          routePath: route.path,
          origin: ctx.get('Origin') || undefined,
          pathSession: route.sessionFrom === 'params' ? ctx.params.session : undefined,
        });
      },
      enforce: (principal, route, input) =>
        clientRules.enforce(principal, {
          method: route.method,
          routePath: route.path,
          session: sessionOf(route, input),
          chatId: (input.body as { chatId?: string } | undefined)?.chatId,
          origin: input.ctx.get('Origin') || undefined,
        }),
    },
    bodyLimits: { defaultBytes: config.server.bodyLimitBytes, mediaBytes: config.server.mediaBodyLimitBytes, maxLargeBodies: config.server.maxLargeBodies },
    maxRequestsInFlight: config.server.maxRequestsInFlight,
    maxRequestsInFlightPerKey: config.server.maxRequestsInFlightPerKey,
    early: [clientCors(clientRules)],
    logger: logger.child({ module: 'http' }),
    metrics,
    audit,
    isDraining: () => draining,
    commits: tick,
    forwarder: node?.forwarder,
    idempotency,
  });
  const server = createHttpServer(app.callback(), config.server);
  await sessions.prepareRestore();
  await node?.cluster.freePreviousRun();
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  dispatcher.start();
  fanout.start();
  if ((await webhooks.list(1)).total > 0) webhookHttp.preload();
  const backupEvery = scheduleInterval(config.backup.schedule);
  if (backupEvery) backups.schedule(backupEvery, config.backup.keep, config.backup.withMedia);
  audit.start();
  recordRestore(dataDir, (entry) => audit.record(entry), logger);

  if (node) {
    await node.cluster.join(config.cluster.advertiseUrl ?? url);
    await node.cluster.run(sessions);
  }
  await sendQueue.start();
  const restored = await sessions.restoreAll();
  logger.info({ url, version: VERSION, restored }, 'gateway listening');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      draining = true;
      logger.info('shutting down');
      fanout.stop();
      const webhooksStopped = dispatcher.stop(config.shutdownTimeoutMs);
      for (const stream of eventStreams) stream.end();
      const serverClosed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await serverClosed;
      clearTimeout(deadline);
      clearInterval(pruneMessages);
      clearInterval(pruneEvents);
      searchIndexer.stop();
      sendQueue.stop();
      backups.stop();
      audit.close();
      clientRules.close();
      mediaService.close();
      node?.cluster.leave();
      await sessions.shutdown();
      await engines.close();
      await webhooksStopped;
      void webhookHttp.close();
      tick.flush();
      await checkpoints?.stop();
      await db.close();
      logger.info('stopped');
    })());

  return { url, port, logger, services, close };
}

/**
 * requestTimeout bounds receiving a request (headers and body), not answering it: event streams last for hours.
 * Node checks both timeouts every connectionsCheckingInterval (30 s by default), too coarse for a 10 s headers timeout.
 */
function createHttpServer(listener: RequestListener, settings: GatewayConfig['server']): Server {
  const server = createServer(
    {
      requestTimeout: settings.requestTimeoutMs,
      headersTimeout: settings.headersTimeoutMs,
      // without this Node answers a Host-less HTTP/1.1 request itself, with a bare 400; the app needs no Host
      requireHostHeader: false,
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(settings.headersTimeoutMs / 4))),
    },
    listener,
  );
  server.on('clientError', answerClientError);
  server.on('connect', answerConnectWith(listener));
  // an Expect other than 100-continue would get Node's bare 417; the app answers it like any request
  server.on('checkExpectation', listener);
  server.keepAliveTimeout = 5000;
  server.maxConnections = settings.maxConnections;
  capConnectionsPerAddress(server, settings.maxConnectionsPerAddress, settings.connectionCapExemptAddresses);
  return server;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      done();
    });
  });
}
