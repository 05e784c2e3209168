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

/** One connected (or connecting) account: its lifecycle, plus the operations of the network. */
export interface EngineSession extends MessagingOps {
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

// ---- messaging ----

export type MediaKind = 'image' | 'video' | 'voice' | 'file' | 'sticker';
export type MessageType = 'text' | MediaKind | 'poll' | 'location' | 'contact';
export type DeliveryStatus = 'pending' | 'sent' | 'delivered' | 'read';
export type TypingState = 'composing' | 'recording' | 'paused';

export interface OutgoingMedia {
  data: Buffer;
  mimeType: string;
  filename?: string;
}

/** A message to send, already validated and with media bytes in hand. */
export type OutgoingContent =
  | { type: 'text'; text: string; linkPreview?: boolean }
  | { type: MediaKind; media: OutgoingMedia; caption?: string; ptt?: boolean }
  | { type: 'poll'; title: string; options: string[]; multiSelect: boolean }
  | { type: 'location'; latitude: number; longitude: number; address?: string; name?: string }
  | { type: 'contact'; vcard: string; displayName: string };

/** A message of the store an operation refers to (quotes, edits, reactions). */
export interface MessageRef {
  id: string;
  chatId: string;
  fromMe: boolean;
  /** sender in groups */
  participant?: string;
  type?: MessageType;
  text?: string;
  /** engine-specific copy of the message (Baileys keeps the WAMessage for quotes and retries) */
  raw?: unknown;
}

export interface SendOptions {
  quoted?: MessageRef;
  mentions?: string[];
  forwarded?: boolean;
}

export interface SentMessage {
  messageId: string;
  /** ISO 8601 */
  timestamp: string;
  status: DeliveryStatus;
  /** the chat as the network addressed it */
  chatId: string;
  phoneNumber?: string;
  lid?: string;
  /** poll secret and other material later operations need */
  secret?: string;
  raw?: unknown;
}

/**
 * An incoming media attachment inside a message event: bytes the engine already holds, or a reference
 * it can download later. The media pipeline stores it and replaces it with `mediaId` before publishing.
 */
export interface MediaAttachment {
  mimeType: string;
  size?: number;
  filename?: string;
  data?: Buffer;
  ref?: unknown;
}

export interface MessagingOps {
  sendMessage(chatId: string, content: OutgoingContent, options: SendOptions): Promise<SentMessage>;
  editMessage(target: MessageRef, text: string): Promise<void>;
  deleteMessage(target: MessageRef): Promise<void>;
  react(target: MessageRef, emoji: string): Promise<void>;
  sendTyping(chatId: string, state: TypingState): Promise<void>;
  markSeen(target: MessageRef): Promise<void>;
  star(target: MessageRef, star: boolean): Promise<void>;
  /** the bytes of a media attachment whose `ref` the engine gave; throws MEDIA_EXPIRED when gone */
  downloadMedia?(ref: unknown): Promise<NodeJS.ReadableStream>;
}
