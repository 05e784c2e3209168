// The daemon's resolved configuration: defaults merged with gateway.yaml and GATEWAY_* env vars.
import type { EngineName } from '../engine/types.js';

export interface GatewayConfig {
  host: string;
  port: number;
  dataDir: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  auth: { masterKey?: string };
  engine: {
    default: EngineName;
    baileys: { websocketUrl?: string; browser?: [string, string, string] };
  };
  sessions: {
    qrRotationSeconds: number;
    qrMaxRotations: number;
    reconnectBaseMs: number;
    reconnectMaxMs: number;
    reconnectMaxAttempts: number;
  };
  messages: { retentionDays: number };
  /** local media blobs in <dataDir>/media: at most localCacheMaxBytes, least recently used evicted first */
  media: { localCacheMaxBytes: number };
  webhooks: {
    allowPrivateTargets: boolean;
    signaturePrefix: boolean;
    timeoutMs: number;
    concurrency: number;
    perWebhookConcurrency: number;
    retentionDays: number;
  };
  /** the HTTP server: body limits, timeouts and caps that keep one client from exhausting the daemon */
  server: {
    bodyLimitBytes: number;
    mediaBodyLimitBytes: number;
    maxLargeBodies: number;
    maxRequestsInFlight: number;
    maxConnections: number;
    requestTimeoutMs: number;
    headersTimeoutMs: number;
  };
  events: { maxStreams: number };
  clientTokens: { maxTtlSeconds: number; rateWindowSeconds: number };
  metrics: { public: boolean };
  shutdownTimeoutMs: number;
}
