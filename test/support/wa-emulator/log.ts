// Logging for the emulator: a plain callback, plus a silent logger in the shape Baileys' Signal code wants.
import type { SocketConfig } from '@whiskeysockets/baileys';

/** `(message, data)`; the default drops everything. Set WA_EMULATOR_LOG=1 to print to stderr. */
export type EmulatorLog = (message: string, data?: unknown) => void;

export type BaileysLogger = SocketConfig['logger'];

export const silentLogger: BaileysLogger = {
  level: 'silent',
  child: () => silentLogger,
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

export function defaultLog(): EmulatorLog {
  if (!process.env.WA_EMULATOR_LOG) return () => {};
  return (message, data) => process.stderr.write(`[wa-emulator] ${message}${data === undefined ? '' : ` ${typeof data === 'string' ? data : JSON.stringify(data)}`}\n`);
}
