// Bridges Baileys' ILogger onto the daemon's pino logger: one child per session, Baileys' chatter kept at warn or below.
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js';
import type { Logger } from '../../logger.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * The level Baileys logs at: the daemon's own when it is `debug`/`trace` (someone is debugging) or stricter than
 * `warn`; otherwise `warn`, so Baileys' per-stanza info lines stay out of an `info` log.
 */
export function baileysLevel(daemonLevel: string): string {
  const rank = LEVELS.indexOf(daemonLevel as (typeof LEVELS)[number]);
  if (rank < 0) return 'warn';
  if (daemonLevel === 'debug' || daemonLevel === 'trace') return daemonLevel;
  return rank > LEVELS.indexOf('warn') ? daemonLevel : 'warn';
}

/**
 * A Baileys logger over a pino child. Baileys reports expected events (a 515 "stream errored" after pairing, a
 * closed socket) at `error`; they reach our log as `warn`, because the session's status already says what happened.
 * `tap` sees every line Baileys writes from debug up, whatever the level: the confirmation gate and the decryption
 * health read a few of them (the facts Baileys reports nowhere else).
 */
export function bridgeLogger(parent: Logger, bindings: Record<string, unknown>, level: string, tap?: LogTap): ILogger {
  const pinoChild = parent.child({ component: 'baileys', ...bindings }, { level });
  return wrap(pinoChild, tap);
}

export type LogTap = (msg: string | undefined, fields: unknown, level: 'debug' | 'info' | 'warn' | 'error') => void;

function wrap(target: Logger, tap?: LogTap): ILogger {
  return {
    get level() {
      return target.level;
    },
    child: (obj) => wrap(target.child(obj), tap),
    trace: (obj, msg) => target.trace(obj as object, msg),
    debug: (obj, msg) => {
      target.debug(obj as object, msg);
      tap?.(msg, obj, 'debug');
    },
    info: (obj, msg) => {
      target.info(obj as object, msg);
      tap?.(msg, obj, 'info');
    },
    warn: (obj, msg) => {
      target.warn(obj as object, msg);
      tap?.(msg, obj, 'warn');
    },
    error: (obj, msg) => {
      target.warn(obj as object, msg);
      tap?.(msg, obj, 'error');
    },
  };
}

/** What libsignal (Baileys' Signal implementation) prints with console.* — some of it with session private keys. */
const LIBSIGNAL_LINES = [
  'Closing session:',
  'Opening session:',
  'Removing old closed session:',
  'Closing open session',
  'Closing stale open session',
  'Session already',
  'Migrating session to:',
  'Decrypted message with closed session',
  'Failed to decrypt message with any known session',
  'Session error:',
  'Unhandled bucket type',
  'WARNING: Expected pubkey',
];

let consoleGuarded = false;

/**
 * libsignal logs through console.info/warn/error, and "Closing session:" / "Opening session:" dump whole session
 * records, private ratchet keys included, to stdout. Those lines are routed to the engine logger at debug, as their
 * first string only; everything else reaches the console unchanged. Installed once per process.
 */
export function guardConsoleFromLibsignal(logger: Logger): void {
  if (consoleGuarded) return;
  consoleGuarded = true;
  for (const method of ['log', 'info', 'warn', 'error'] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const first = args[0];
      if (typeof first === 'string' && LIBSIGNAL_LINES.some((line) => first.startsWith(line))) {
        logger.debug({ module: 'libsignal' }, first.replace(/:$/, ''));
        return;
      }
      original(...args);
    };
  }
}
