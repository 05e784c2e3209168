// Forced logouts: the network ended the session for a reason the account's owner must act on (docs/ENGINES.md has the
// table of what WhatsApp sends for each). One table for both engines: the status the session ends in, the cause stored.
import type { CloseCauseCode, ConnectionUpdate } from './types.js';

export type LogoutReason = 'unlinked' | 'replaced' | 'banned' | 'temporarily_banned' | 'locked' | 'key_error';
export const LOGOUT_REASONS: readonly LogoutReason[] = ['unlinked', 'replaced', 'banned', 'temporarily_banned', 'locked', 'key_error'];

type CloseReport = Extract<ConnectionUpdate, { kind: 'close' }>;

interface Logout {
  cause: CloseCauseCode;
  reason: CloseReport['reason'];
  /** the network forgot the device: its credentials are worthless */
  credentialsCleared: boolean;
  /** what the owner reads in lastError and the log */
  detail: string;
}

export const LOGOUTS: Readonly<Record<LogoutReason, Logout>> = {
  unlinked: { cause: 'LOGGED_OUT', reason: 'LOGGED_OUT', credentialsCleared: true, detail: 'the device was unlinked from the phone' },
  replaced: { cause: 'CONNECTION_REPLACED', reason: 'FAILED', credentialsCleared: false, detail: 'the same credentials connected elsewhere; not reconnecting so the two do not fight' },
  banned: { cause: 'BANNED', reason: 'FAILED', credentialsCleared: false, detail: 'the account is banned' },
  temporarily_banned: { cause: 'TEMPORARILY_BANNED', reason: 'TEMPORARY_BAN', credentialsCleared: false, detail: 'the account is banned for a while' },
  locked: { cause: 'ACCOUNT_LOCKED', reason: 'TEMPORARY_BAN', credentialsCleared: false, detail: 'the account is locked: open WhatsApp on the phone' },
  key_error: { cause: 'KEY_ERROR', reason: 'FAILED', credentialsCleared: false, detail: "the server rejected the device's keys: re-pair the session" },
};

const REASON_OF_CAUSE = new Map<CloseCauseCode, LogoutReason>(LOGOUT_REASONS.map((reason) => [LOGOUTS[reason].cause, reason]));

/** The forced logout a close cause stands for; undefined for a close that is not one (network, QR, …). */
export function logoutReasonOf(cause: CloseCauseCode): LogoutReason | undefined {
  return REASON_OF_CAUSE.get(cause);
}

/** A stored close cause with the forced logout it stands for (lastError.logoutReason), when it is one. */
export function withLogoutReason<T extends { code: CloseCauseCode }>(cause: T): T & { logoutReason?: LogoutReason } {
  const logoutReason = logoutReasonOf(cause.code);
  return logoutReason ? { ...cause, logoutReason } : cause;
}

/** The close an engine reports for a forced logout; `message` is what the network said (kept in lastError). */
export function logoutReport(reason: LogoutReason, message: string): CloseReport {
  const logout = LOGOUTS[reason];
  return {
    kind: 'close',
    reason: logout.reason,
    detail: logout.detail,
    cause: { code: logout.cause, message },
    ...(logout.credentialsCleared ? { credentialsCleared: true } : {}),
  };
}
