// The daemon's resolved configuration: defaults merged with gateway.yaml and GATEWAY_* env vars.
import type { EngineName } from '../engine/types.js';

export interface GatewayConfig {
  host: string;
  port: number;
  dataDir: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** encryptionKey: the data key sealing secrets at rest; without it, derived from masterKey (src/auth/secret-box.ts) */
  auth: { masterKey?: string; encryptionKey?: string };
  /** where the daemon keeps its state: SQLite in <dataDir>/gateway.db, or a PostgreSQL database several daemons share */
  store: { kind: 'sqlite' | 'postgres'; postgres: { url?: string } };
  /** on PostgreSQL: this node, how the others reach it, and how long its sessions stay its own without a renewal */
  cluster: { nodeId?: string; advertiseUrl?: string; leaseSeconds: number; secret?: string };
  engine: {
    default: EngineName;
    /** wireLog: a file the sandbox network appends every message it carries to (tests count what reached the network) */
    sandbox?: { wireLog?: string };
    baileys: {
      websocketUrl?: string;
      browser?: [string, string, string];
      /** `host[:port]` of WhatsApp media servers besides *.whatsapp.net (an emulator's); trusted, fetched without the URL guard */
      mediaHosts: string[];
      /** a media download from the CDN must finish within this, ms */
      mediaDownloadTimeoutMs: number;
      /** and may be at most this many encrypted bytes */
      mediaDownloadMaxBytes: number;
    };
    /** an incoming message that failed to decrypt and got no decrypted copy within this is message.undecryptable */
    decryption: { undecryptableAfterSeconds: number };
  };
  sessions: {
    qrRotationSeconds: number;
    qrMaxRotations: number;
    reconnectBaseMs: number;
    reconnectMaxMs: number;
    reconnectMaxAttempts: number;
    /** sessions that may exist at once; creating one more answers 409 LIMIT_REACHED */
    maxSessions: number;
    /** at start, sessions of a networked engine (Baileys) reconnect at most this many per second; 0 = all at once */
    restoreRatePerSecond: number;
    /** the session health watchdog (docs/ENGINES.md, Session health) */
    health: SessionHealthConfig;
  };
  messages: {
    /** messages (and their media files) older than this many days are deleted (at start, then hourly); 'keep': never */
    retentionDays: number | 'keep';
    /** estimated bytes held by accepted `Prefer: respond-async` sends not yet done; past it 503 SERVER_BUSY */
    asyncMaxQueuedBytes: number;
    /** how long a send waits for WhatsApp's server ack before it answers `pending`, ms; a refusal within it is a 4xx */
    sendAckWaitMs: number;
    /** no server ack within this many ms after a send: the message is `failed` with reason `timeout` */
    serverAckTimeoutMs: number;
  };
  /** the send governor (src/messages/governor.ts): pace, per-recipient gap, first-contact caps; sessions override in config.governor */
  governor: GovernorConfig;
  /** local media blobs in <dataDir>/media: at most localCacheMaxBytes, least recently used evicted first */
  media: {
    localCacheMaxBytes: number;
    /** media and picture URLs may point at loopback/private hosts or use http (never for client tokens) */
    allowPrivateUrls: boolean;
    /** URL media downloads at once, in the whole daemon */
    urlFetchConcurrency: number;
    /** URL media downloads waiting for a slot; past it 503 SERVER_BUSY */
    urlFetchQueue: number;
    /** downloads (running and waiting) one caller other than the master key may hold; the pool's last 2 places are the master key's */
    urlFetchPerKey: number;
    /** the admin S3 endpoint may be a loopback/private host (a local MinIO) */
    s3AllowPrivateEndpoint: boolean;
    /** S3: connect timeout, and longest silence on an open request, ms */
    s3ConnectTimeoutMs: number;
    s3RequestTimeoutMs: number;
    /** auto-persist of one received file (all attempts) must finish within this, ms; then the event goes out without mediaUrl */
    autoPersistTimeoutMs: number;
  };
  webhooks: {
    allowPrivateTargets: boolean;
    signaturePrefix: boolean;
    timeoutMs: number;
    concurrency: number;
    perWebhookConcurrency: number;
    /** succeeded and failed deliveries are pruned this many days after their last update */
    retentionDays: number;
    /** webhooks that may exist at once; registering one more answers 409 LIMIT_REACHED */
    maxWebhooks: number;
    /** webhooks one API key may register; the last 10 of maxWebhooks are the master key's */
    maxWebhooksPerKey: number;
  };
  /** the HTTP server: body limits, timeouts and caps that keep one client from exhausting the daemon */
  server: {
    bodyLimitBytes: number;
    mediaBodyLimitBytes: number;
    maxLargeBodies: number;
    maxRequestsInFlight: number;
    /** requests in flight one key (master key, API key, client token) may hold; past it 503 for that caller only */
    maxRequestsInFlightPerKey: number;
    maxConnections: number;
    /** connections one client address may hold at once; one more is answered 503 and closed as it is accepted */
    maxConnectionsPerAddress: number;
    /** client addresses that cap does not apply to (the host itself, a reverse proxy) */
    connectionCapExemptAddresses: string[];
    requestTimeoutMs: number;
    headersTimeoutMs: number;
  };
  /** event streams open at once; one caller other than the master key holds at most maxStreamsPerKey, and the last 4 are the master key's */
  /** retentionDays: how long the event log keeps events (a session's newest is kept whatever its age) */
  events: { maxStreams: number; maxStreamsPerKey: number; retentionDays: number };
  clientTokens: { maxTtlSeconds: number; rateWindowSeconds: number };
  metrics: { public: boolean };
  /** backups into <dataDir>/backups by the daemon itself: `off`, `hourly`, `daily`, `weekly` or `<n>s|m|h|d`; the newest `keep` stay */
  backup: { schedule: string; keep: number; withMedia: boolean };
  /** the audit log of admin actions: entries older than retentionDays are pruned (at start, then hourly) */
  audit: { retentionDays: number };
  /** the OpenAPI document (and the reference page) without a key; false: the master key or any API key */
  docs: { public: boolean };
  /** the web console at /console; false: its routes do not exist (404) */
  console: { enabled: boolean };
  shutdownTimeoutMs: number;
}

/** The session health watchdog's times (docs/ENGINES.md has their reasons). */
export interface SessionHealthConfig {
  /** no frame for this long (keep-alive answers included) makes a CONNECTED session degraded; 0 = no watchdog */
  silenceSeconds: number;
  /** how often an open connection pings the server */
  keepAliveSeconds: number;
  /** how long the probe waits for its answer */
  probeTimeoutSeconds: number;
  /** how long a soft reconnect, then a restart, has to bring the session back before its probe */
  recoverSeconds: number;
}

/** The send governor's settings, gateway-wide (docs/ENGINES.md "Send governor" gives each default's reason). */
export interface GovernorConfig {
  /** false: no session is paced, capped or queued (typing before a send, config.safeMode or governor.typing, still applies) */
  enabled: boolean;
  /** the pace: sends a minute a session makes once its burst is spent */
  perMinute: number;
  /** sends a session may make at once before the pace applies (the bucket's size) */
  burst: number;
  /** a queued send waits a random 0..jitterPercent % of one pace interval more */
  jitterPercent: number;
  /** two sends to the same chat are at least this far apart */
  recipientGapSeconds: number;
  /** first messages a day (UTC) to people who never wrote to the session, once it is past its warm-up */
  firstContactsPerDay: number;
  /** the same cap on the session's first days since it was paired: warmup[0] on the day of pairing, warmup[1] the next … */
  warmup: number[];
  /** a typing indicator and a pause before each send */
  typing: boolean;
  /** sends one session may have waiting; past it 429 SEND_QUEUE_FULL */
  queueMaxEntries: number;
  /** bytes (bodies as stored) one session may have waiting */
  queueMaxBytes: number;
}
