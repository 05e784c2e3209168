// Default values of every setting; gateway.example.yaml documents the same values.
import type { GatewayConfig } from './types.js';

export const DEFAULT_CONFIG: GatewayConfig = {
  host: '127.0.0.1',
  port: 3000,
  dataDir: './data',
  logLevel: 'info',
  auth: {},
  engine: { default: 'baileys', baileys: {} },
  sessions: {
    qrRotationSeconds: 20,
    qrMaxRotations: 6,
    reconnectBaseMs: 1000,
    reconnectMaxMs: 60_000,
    reconnectMaxAttempts: 10,
  },
  messages: { retentionDays: 30 },
  media: { localCacheMaxBytes: 1024 * 1024 * 1024 },
  webhooks: {
    allowPrivateTargets: false,
    signaturePrefix: false,
    timeoutMs: 10_000,
    concurrency: 64,
    perWebhookConcurrency: 16,
    retentionDays: 7,
  },
  server: {
    bodyLimitBytes: 1024 * 1024,
    // base64 media may be 70 MB decoded, about 94 MB encoded, plus the JSON around it
    mediaBodyLimitBytes: 100 * 1024 * 1024,
    maxLargeBodies: 4,
    maxRequestsInFlight: 256,
    maxConnections: 1024,
    requestTimeoutMs: 60_000,
    headersTimeoutMs: 10_000,
  },
  events: { maxStreams: 64 },
  clientTokens: { maxTtlSeconds: 900, rateWindowSeconds: 60 },
  metrics: { public: false },
  shutdownTimeoutMs: 4000,
};
