// The services route handlers call; assembled once by src/daemon.ts.
import type { ApiKeys } from '../auth/api-keys.js';
import type { GatewayConfig } from '../config/types.js';
import type { EventBus } from '../events/bus.js';
import type { SessionManager } from '../sessions/manager.js';

export interface Services {
  config: GatewayConfig;
  version: string;
  startedAt: number;
  sessions: SessionManager;
  apiKeys: ApiKeys;
  bus: EventBus;
}
