// The Engine interface every network implementation provides, and the normalised values it reports.
import type { EventType } from '../events/catalogue.js';

export type EngineName = 'baileys' | 'sandbox';
export const ENGINE_NAMES: readonly EngineName[] = ['baileys', 'sandbox'];

export type SessionStatus = 'CONNECTING' | 'CONNECTED' | 'DISCONNECTED';
export type StatusReason =
  | 'SCAN_QR'
  | 'AUTO_RECONNECT'
  | 'FAILED'
  | 'MANUAL_STOP'
  | 'QR_TIMEOUT'
  | 'LOGGED_OUT'
  | 'TEMPORARY_BAN'
  | 'STREAM_ERROR';
export const STATUS_REASONS: readonly StatusReason[] = [
  'SCAN_QR',
  'AUTO_RECONNECT',
  'FAILED',
  'MANUAL_STOP',
  'QR_TIMEOUT',
  'LOGGED_OUT',
  'TEMPORARY_BAN',
  'STREAM_ERROR',
];

/** What the account looks like once paired. */
export interface AccountInfo {
  phoneNumber: string;
  pushName?: string;
  businessName?: string;
  platform: 'smba' | 'consumer';
  lid?: string;
}

/** Per-session key/value store for credentials (values serialised by the engine), handed to it by the session manager. */
export interface AuthStateStore {
  get(key: string): string | undefined;
  getMany(keys: string[]): Map<string, string>;
  /** writes every entry in one transaction; a null value deletes the key */
  set(entries: Record<string, string | null>): void;
  clear(): void;
  isEmpty(): boolean;
}

/** Lifecycle facts the engine reports; the session manager turns them into status and session.* events. */
export type ConnectionUpdate =
  | { kind: 'qr'; qr: string; expiresAt: string }
  | { kind: 'open'; account: AccountInfo }
  | {
      kind: 'close';
      reason: Exclude<StatusReason, 'SCAN_QR' | 'MANUAL_STOP'>;
      /** credentials were removed by the network (logged out / unlinked) */
      credentialsCleared?: boolean;
      detail?: string;
    };

export interface EngineSessionHooks {
  connection(update: ConnectionUpdate): void;
  /** a normalised domain event (message.received, presence.update, …) */
  event(type: EventType, payload: Record<string, unknown>): void;
}

export interface SessionOptions {
  name: string;
  proxy?: string;
  config: Record<string, unknown>;
  auth: AuthStateStore;
  hooks: EngineSessionHooks;
}

/** One connected (or connecting) account. Methods beyond the lifecycle live in EngineSessionApi. */
export interface EngineSession {
  readonly engine: EngineName;
  /** open the connection; reports qr/open/close through the hooks */
  connect(): Promise<void>;
  /** close the connection, keep credentials */
  disconnect(): Promise<void>;
  /** unlink the device and forget credentials */
  logout(): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
}

export interface Engine {
  readonly name: EngineName;
  createSession(options: SessionOptions): EngineSession;
  close(): Promise<void>;
}
