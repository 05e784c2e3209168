// Default values of every setting; gateway.example.yaml documents the same values.
import type { GatewayConfig } from './types.js';

export const DEFAULT_CONFIG: GatewayConfig = {
  host: '127.0.0.1',
  port: 3000,
  dataDir: './data',
  logLevel: 'info',
  auth: {},
  engine: { default: 'baileys', baileys: { mediaHosts: [], mediaDownloadTimeoutMs: 300_000, mediaDownloadMaxBytes: 2 * 1024 * 1024 * 1024 + 1024 * 1024 } },
  sessions: {
    qrRotationSeconds: 20,
    qrMaxRotations: 6,
    reconnectBaseMs: 1000,
    reconnectMaxMs: 60_000,
    reconnectMaxAttempts: 10,
    maxSessions: 10_000,
  },
  messages: { retentionDays: 30, asyncMaxQueuedBytes: 256 * 1024 * 1024 },
  media: {
    localCacheMaxBytes: 1024 * 1024 * 1024,
    allowPrivateUrls: false,
    urlFetchConcurrency: 4,
    urlFetchQueue: 16,
    s3AllowPrivateEndpoint: false,
    s3ConnectTimeoutMs: 10_000,
    s3RequestTimeoutMs: 60_000,
    autoPersistTimeoutMs: 120_000,
  },
  webhooks: {
    allowPrivateTargets: false,
    signaturePrefix: false,
    timeoutMs: 10_000,
    concurrency: 64,
    perWebhookConcurrency: 16,
    retentionDays: 7,
    maxWebhooks: 100,
  },
  server: {
    bodyLimitBytes: 1024 * 1024,
    // base64 media may be 70 MB decoded, about 94 MB encoded, plus the JSON around it
    mediaBodyLimitBytes: 100 * 1024 * 1024,
    maxLargeBodies: 4,
    maxRequestsInFlight: 256,
    // a quarter of the global cap: one flooding client leaves the rest to the others
    maxRequestsInFlightPerKey: 64,
    maxConnections: 1024,
    requestTimeoutMs: 60_000,
    headersTimeoutMs: 10_000,
  },
  events: { maxStreams: 64 },
  clientTokens: { maxTtlSeconds: 900, rateWindowSeconds: 60 },
  metrics: { public: false },
  audit: { retentionDays: 90 },
  docs: { public: true },
  shutdownTimeoutMs: 4000,
};
