// How a closed Baileys socket maps onto the session states of SPEC §3 (docs/ENGINES.md has the table).
import { DisconnectReason } from '@whiskeysockets/baileys';
import { logoutReport, type LogoutReason } from '../logouts.js';
import type { CloseCause, ConnectionUpdate } from '../types.js';

type CloseReport = Extract<ConnectionUpdate, { kind: 'close' }>;

/** What the engine does about a close: reconnect by itself at once, report it to the manager, or nothing (its own stop). */
export type CloseAction = { kind: 'restart' } | { kind: 'report'; report: CloseReport } | { kind: 'ignore' };

export interface CloseContext {
  /** the engine itself ended the socket (stop, logout, replaced by a newer socket) */
  stopping: boolean;
  /** the creds belong to a linked device */
  paired: boolean;
  /** the error's message (Baileys' Boom message) */
  message?: string;
  /** the error itself: a WebSocket failure carries the socket's error (its `code`) as `data` */
  error?: unknown;
  /** the session connects through a proxy: a failure to connect is the proxy's */
  viaProxy?: boolean;
}

/** The status code of a Baileys close (`lastDisconnect.error.output.statusCode`); undefined for `end(undefined)`. */
export function closeStatusCode(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}

export function classifyClose(code: number | undefined, ctx: CloseContext): CloseAction {
  if (ctx.stopping || code === undefined) return { kind: 'ignore' };
  const detail = ctx.message ? `${ctx.message} (${code})` : `closed with ${code}`;
  const logout = forcedLogout(code, ctx);
  if (logout) return { kind: 'report', report: logoutReport(logout, detail) };
  const cause = closeCause(code, ctx);
  const report = (reason: CloseReport['reason'], extra: Partial<CloseReport> = {}): CloseAction => ({ kind: 'report', report: { kind: 'close', reason, detail, cause, ...extra } });
  switch (code) {
    case DisconnectReason.restartRequired:
      return { kind: 'restart' };
    case DisconnectReason.loggedOut:
      // not paired yet: the login of a pairing was refused
      return report('LOGGED_OUT', { credentialsCleared: true, detail: `login refused (401): ${detail}` });
    case DisconnectReason.timedOut:
      // 408 is both "the QR codes ran out" and "the network went away"
      if (!ctx.paired && ctx.message?.includes('QR refs')) return report('QR_TIMEOUT', { detail: 'no scan before the QR codes ran out' });
      return report('AUTO_RECONNECT');
    case DisconnectReason.connectionClosed:
    case DisconnectReason.unavailableService:
      return report('AUTO_RECONNECT');
    case DisconnectReason.badSession:
      return report('STREAM_ERROR');
    case DisconnectReason.multideviceMismatch:
      return report('FAILED', { detail: `multi-device mismatch (411): re-pair the session` });
    default:
      // other <failure reason=…> codes (405 client too old, …) are terminal; anything else is a stream error
      return code >= 400 && code < 500 ? report('FAILED') : report('STREAM_ERROR');
  }
}

/**
 * The forced logout a close is, from what the server sent (Baileys gives the stanza as the error's `data`): a stream
 * error `<conflict type="device_removed">` with code 401 or a `<failure reason="401">` (unlinked; a pairing's refused login
 * when not paired), `<conflict type="replaced">` (440), `<failure reason="406">` (banned), `402` (banned for a while, with
 * `expire`), `403` (locked), and a stream error whose reason is `<bad-mac>` (500 in Baileys: the server could not verify
 * the device's keys).
 */
export function forcedLogout(code: number, ctx: Pick<CloseContext, 'paired' | 'error'>): LogoutReason | undefined {
  switch (code) {
    case DisconnectReason.loggedOut:
      return ctx.paired ? 'unlinked' : undefined;
    case DisconnectReason.connectionReplaced:
      return 'replaced';
    case 406:
      return 'banned';
    case 402:
      return 'temporarily_banned';
    case DisconnectReason.forbidden:
      return 'locked';
    case DisconnectReason.badSession:
      return (ctx.error as { data?: { tag?: unknown } } | undefined)?.data?.tag === 'bad-mac' ? 'key_error' : undefined;
    default:
      return undefined;
  }
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

/** Why the socket closed, from the socket error underneath when there is one, else from the close code. */
export function closeCause(code: number, ctx: Pick<CloseContext, 'message' | 'error' | 'paired' | 'viaProxy'>): CloseCause {
  const message = `${ctx.message ?? 'connection closed'} (${code})`;
  const socketError = (ctx.error as { data?: unknown } | undefined)?.data;
  const errno = (socketError as { code?: unknown } | undefined)?.code;
  if (typeof errno === 'string' && errno) {
    if (ctx.viaProxy) return { code: 'NETWORK_PROXY', message: `through the proxy: ${message}` };
    if (errno === 'ECONNREFUSED') return { code: 'NETWORK_REFUSED', message };
    if (errno === 'ETIMEDOUT' || errno === 'ESOCKETTIMEDOUT') return { code: 'NETWORK_TIMEOUT', message };
    if (errno === 'ENOTFOUND' || errno === 'EAI_AGAIN') return { code: 'NETWORK_DNS', message };
    if (TLS_CODES.test(errno)) return { code: 'NETWORK_TLS', message };
    return { code: 'NETWORK_LOST', message };
  }
  if (ctx.viaProxy && /proxy|socks/i.test(ctx.message ?? '')) return { code: 'NETWORK_PROXY', message };
  switch (code) {
    case DisconnectReason.loggedOut:
      // a paired device's 401 is a forced logout (classifyClose); before pairing it is a refused login
      return { code: ctx.paired ? 'LOGGED_OUT' : 'LOGIN_REFUSED', message };
    case DisconnectReason.timedOut:
      return !ctx.paired && ctx.message?.includes('QR refs') ? { code: 'QR_TIMEOUT', message } : { code: 'NETWORK_TIMEOUT', message };
    case DisconnectReason.connectionClosed:
      return { code: 'NETWORK_LOST', message };
    case DisconnectReason.unavailableService:
      return { code: 'SERVICE_UNAVAILABLE', message };
    default:
      return code >= 400 && code < 500 ? { code: 'LOGIN_REFUSED', message } : { code: 'STREAM_ERROR', message };
  }
}
