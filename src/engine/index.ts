// Maps engine names to their factories; the only place that knows which engines exist. An engine's code is imported
// the first time a session needs it: Baileys costs tens of MB and a few hundred ms, which a daemon without a Baileys
// session never pays.
import type { GatewayConfig } from '../config/types.js';
import { createLogger, type Logger } from '../logger.js';
import type { Engine, EngineName } from './types.js';
import { createSandboxEngine } from './sandbox/index.js';
import type { ServerAckTiming } from './server-acks.js';
import { DEFAULT_UNDECRYPTABLE_AFTER_SECONDS } from './decryption.js';

export interface EngineRegistry {
  has(name: EngineName): boolean;
  /** the engine, created on first use (the same promise for every caller) */
  load(name: EngineName): Promise<Engine>;
  /** closes the engines that were created */
  close(): Promise<void>;
}

export function createEngines(config: GatewayConfig, logger: Logger = createLogger(config.logLevel)): EngineRegistry {
  const factories = new Map<EngineName, () => Promise<Engine>>([
    ['baileys', async () => (await import('./baileys/index.js')).createBaileysEngine(config, logger)],
    ['sandbox', async () => createSandboxEngine({ ...config.sessions, undecryptableAfterSeconds: config.engine.decryption?.undecryptableAfterSeconds ?? DEFAULT_UNDECRYPTABLE_AFTER_SECONDS }, serverAckTimingOf(config), config.engine.sandbox?.wireLog)],
  ]);
  const engines = new Map<EngineName, Promise<Engine>>();
  return {
    has: (name) => factories.has(name),
    load(name) {
      let engine = engines.get(name);
      if (!engine) {
        const factory = factories.get(name);
        if (!factory) return Promise.reject(new Error(`unknown engine ${name}`));
        engine = factory();
        // a failed import is retried by the next caller
        engine.catch(() => engines.delete(name));
        engines.set(name, engine);
      }
      return engine;
    },
    async close() {
      const created = await Promise.allSettled(engines.values());
      await Promise.all(created.flatMap((r) => (r.status === 'fulfilled' ? [r.value.close()] : [])));
    },
  };
}

/** How long sends wait for the server's ack, and when its absence fails them (messages.*). */
export function serverAckTimingOf(config: Pick<GatewayConfig, 'messages'>): ServerAckTiming {
  return { waitMs: config.messages.sendAckWaitMs, timeoutMs: config.messages.serverAckTimeoutMs };
}
