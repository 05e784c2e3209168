// The Baileys engine: the real WhatsApp network through @whiskeysockets/baileys, one socket per session.
import type { GatewayConfig } from '../../config/types.js';
import type { Logger } from '../../logger.js';
import type { Engine, EngineSession, SessionOptions } from '../types.js';
import { baileysLevel, guardConsoleFromLibsignal } from './logger.js';
import { BaileysSession } from './session.js';
import { DEFAULT_DOWNLOAD_SETTINGS } from './media-download.js';
import { DEFAULT_UNDECRYPTABLE_AFTER_SECONDS } from '../decryption.js';

export { BaileysSession } from './session.js';

export const DEFAULT_BROWSER: [string, string, string] = ['Session Gateway', 'Chrome', '1.0'];

export function createBaileysEngine(config: Pick<GatewayConfig, 'engine' | 'logLevel' | 'sessions' | 'messages'>, logger: Logger): Engine {
  guardConsoleFromLibsignal(logger);
  const settings = {
    ...(config.engine.baileys.websocketUrl ? { websocketUrl: config.engine.baileys.websocketUrl } : {}),
    browser: config.engine.baileys.browser ?? DEFAULT_BROWSER,
    logger,
    baileysLogLevel: baileysLevel(config.logLevel),
    qr: { rotationSeconds: config.sessions.qrRotationSeconds, maxRotations: config.sessions.qrMaxRotations },
    serverAck: { waitMs: config.messages.sendAckWaitMs, timeoutMs: config.messages.serverAckTimeoutMs },
    undecryptableAfterMs: (config.engine.decryption?.undecryptableAfterSeconds ?? DEFAULT_UNDECRYPTABLE_AFTER_SECONDS) * 1000,
    ...(config.sessions.health ? { keepAlive: { intervalSeconds: config.sessions.health.keepAliveSeconds, watchdog: config.sessions.health.silenceSeconds > 0 } } : {}),
    mediaDownload: {
      trustedHosts: config.engine.baileys.mediaHosts ?? [],
      timeoutMs: config.engine.baileys.mediaDownloadTimeoutMs ?? DEFAULT_DOWNLOAD_SETTINGS.timeoutMs,
      maxBytes: config.engine.baileys.mediaDownloadMaxBytes ?? DEFAULT_DOWNLOAD_SETTINGS.maxBytes,
    },
  };
  return {
    name: 'baileys',
    connectsToNetwork: true,
    createSession(options: SessionOptions): EngineSession {
      return new BaileysSession(options, settings);
    },
    // sessions are disconnected by the manager before the engines close; nothing is shared between them
    close: async () => {},
  };
}

export function isBaileysSession(session: EngineSession | undefined): session is BaileysSession {
  return session instanceof BaileysSession;
}
