// The public shape of a session (SPEC §2 "Session"), built from its stored row.
import { withLogoutReason } from '../engine/logouts.js';
import type { LastError, SessionRow } from '../store/sessions.js';
import type { DecryptionCounts } from './decryption-counters.js';
import type { HealthView } from './health.js';

export interface SessionView {
  name: string;
  engine: string;
  status: string;
  statusReason: string | null;
  phoneNumber?: string;
  pushName?: string;
  businessName?: string;
  platform?: string;
  lid?: string;
  proxy?: string;
  config: Record<string, unknown>;
  /** why the connection last went down (with `logoutReason` when the network forced a logout); null when it never did */
  lastError: LastError | null;
  /** the health watchdog's verdict: null when the session is not CONNECTED here */
  health: HealthView['health'];
  /** when the last frame came from the network; null when the session has no connection here */
  lastFrameAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** decryption health counters, in the answer of GET /api/sessions/{session} (the node running the session keeps them) */
  decryption?: DecryptionCounts;
}

/** Hides a proxy password: `socks5://user:***@host:1080`. */
export function maskProxy(proxy: string): string {
  try {
    const url = new URL(proxy);
    // a user name alone is often the credential itself (token@host); with a password, the password is
    if (url.password) url.password = '***';
    else if (url.username) url.username = '***';
    for (const name of [...url.searchParams.keys()]) url.searchParams.set(name, '***');
    return url.toString().replace(/\/$/, '');
  } catch {
    return '***';
  }
}

export function sessionView(row: SessionRow, health: HealthView, decryption?: DecryptionCounts): SessionView {
  const view: SessionView = {
    name: row.name,
    engine: row.engine,
    status: row.status,
    statusReason: row.statusReason,
    config: row.config,
    lastError: row.lastError && withLogoutReason(row.lastError),
    health: health.health,
    lastFrameAt: health.lastFrameAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
  if (row.phoneNumber) view.phoneNumber = row.phoneNumber;
  if (row.pushName) view.pushName = row.pushName;
  if (row.businessName) view.businessName = row.businessName;
  if (row.platform) view.platform = row.platform;
  if (row.lid) view.lid = row.lid;
  if (row.proxy) view.proxy = maskProxy(row.proxy);
  if (decryption) view.decryption = decryption;
  return view;
}
