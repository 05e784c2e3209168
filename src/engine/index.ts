// Maps engine names to their factories; the only place that knows which engines exist.
import type { GatewayConfig } from '../config/types.js';
import { createLogger, type Logger } from '../logger.js';
import type { Engine, EngineName } from './types.js';
import { createBaileysEngine } from './baileys/index.js';
import { createSandboxEngine } from './sandbox/index.js';

export function createEngines(config: GatewayConfig, logger: Logger = createLogger(config.logLevel)): Map<EngineName, Engine> {
  const engines = new Map<EngineName, Engine>();
  engines.set('baileys', createBaileysEngine(config, logger));
  engines.set('sandbox', createSandboxEngine(config.sessions));
  return engines;
}
