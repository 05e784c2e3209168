// The daemon's resolved configuration: defaults merged with gateway.yaml and GATEWAY_* env vars.
import type { EngineName } from '../engine/types.js';

export interface GatewayConfig {
  host: string;
  port: number;
  dataDir: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** encryptionKey: the data key sealing secrets at rest; without it, derived from masterKey (src/auth/secret-box.ts) */
  auth: { masterKey?: string; encryptionKey?: string };
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
  clientTokens: { maxTtlSeconds: number; rateWindowSeconds: number };
  metrics: { public: boolean };
  shutdownTimeoutMs: number;
}
