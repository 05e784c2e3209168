// Maps engine names to their factories; the only place that knows which engines exist.
import type { GatewayConfig } from '../config/types.js';
import type { Engine, EngineName } from './types.js';
import { createSandboxEngine } from './sandbox/index.js';

export function createEngines(config: GatewayConfig): Map<EngineName, Engine> {
  const engines = new Map<EngineName, Engine>();
  engines.set('sandbox', createSandboxEngine(config.sessions));
  return engines;
}
