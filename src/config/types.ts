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
    /** sessions that may exist at once; creating one more answers 409 LIMIT_REACHED */
    maxSessions: number;
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
    /** succeeded and failed deliveries are pruned this many days after their last update */
    retentionDays: number;
    /** webhooks that may exist at once; registering one more answers 409 LIMIT_REACHED */
    maxWebhooks: number;
  };
  clientTokens: { maxTtlSeconds: number; rateWindowSeconds: number };
  metrics: { public: boolean };
  /** the OpenAPI document (and the reference page) without a key; false: the master key or any API key */
  docs: { public: boolean };
  shutdownTimeoutMs: number;
}
