// Decryption health, shared by the engines: the kinds of decryption failure, the signals an engine reports for the
// session's counters, and the watch that turns an incoming message nobody could decrypt into message.undecryptable.
import { isoTimestamp } from '../timestamp.js';
import type { JidRef } from './jid.js';
import type { FailureReason } from './server-acks.js';

/**
 * Why a message could not be decrypted: the sender's Signal session does not match ours (`bad_mac`), there is none
 * (`no_session`), the pre-key it was encrypted to is gone (`invalid_prekey`), its message key was used already
 * (`spent_key`), the stanza carried no encrypted content (`absent`), or anything else (`other`).
 */
export type DecryptionFailureKind = 'bad_mac' | 'no_session' | 'invalid_prekey' | 'spent_key' | 'absent' | 'other';
export const DECRYPTION_FAILURE_KINDS: readonly DecryptionFailureKind[] = ['bad_mac', 'no_session', 'invalid_prekey', 'spent_key', 'absent', 'other'];

/** What an engine tells the session's decryption counters (EngineSessionHooks.decryption). */
export type DecryptionSignal =
  /** `sent`: the session asked a sender for a message again; `received`: a recipient asked the session for one */
  | { kind: 'retry_receipt'; direction: 'sent' | 'received' }
  /** a message reached the session and could not be decrypted (counted once per message) */
  | { kind: 'failure'; failure: DecryptionFailureKind }
  /** retries stopped for a message: `incoming` message.undecryptable, `outgoing` message.failed (decryption_retry_exhausted) */
  | { kind: 'exhausted'; direction: 'incoming' | 'outgoing' };

/** The message.failed reason of a sent message a recipient could not decrypt however often it was re-sent. */
export const RETRY_EXHAUSTED = 'decryption_retry_exhausted' satisfies FailureReason;

/** The default of engine.decryption.undecryptableAfterSeconds. */
export const DEFAULT_UNDECRYPTABLE_AFTER_SECONDS = 300;

/** An incoming message that did not decrypt. */
export interface FailedMessage {
  messageId: string;
  chatId: string;
  sender: JidRef;
  kind: DecryptionFailureKind;
}

/** How many messages a watch follows at once; past it the oldest is given up on (reported) early. */
const MAX_WATCHED = 10_000;
/** How many reported or recovered ids a watch remembers, so a later copy of the same message is not counted again. */
const MAX_SETTLED = 10_000;

/**
 * Follows incoming messages that failed to decrypt until a decrypted copy arrives (recovered: nothing is reported) or
 * until they are given up on: the engine's retries for it are exhausted, or no copy came within `giveUpMs` of the first
 * failure. Given up, the message is reported once as message.undecryptable.
 */
export class UndecryptableWatch {
  private readonly watched = new Map<string, { message: FailedMessage; retries: number; timer: NodeJS.Timeout }>();
  private readonly settled = new Set<string>();
  /** retry receipts that left before their message was followed (the engine checks the store first, a round trip) */
  private readonly earlyRetries = new Map<string, number>();

  constructor(
    private readonly giveUpMs: number,
    private readonly report: {
      signal(signal: DecryptionSignal): void;
      undecryptable(payload: Record<string, unknown>): void;
    },
  ) {}

  /** A message failed to decrypt: counted and followed the first time, ignored when it is followed or settled already. */
  failed(message: FailedMessage): void {
    if (this.watched.has(message.messageId) || this.settled.has(message.messageId)) return;
    this.report.signal({ kind: 'failure', failure: message.kind });
    if (this.watched.size >= MAX_WATCHED) this.giveUp(this.watched.keys().next().value!);
    const timer = setTimeout(() => this.giveUp(message.messageId), this.giveUpMs);
    timer.unref();
    const retries = this.earlyRetries.get(message.messageId) ?? 0;
    this.earlyRetries.delete(message.messageId);
    this.watched.set(message.messageId, { message, retries, timer });
  }

  /** The session asked the sender for the message again (a retry receipt left). */
  retried(messageId: string): void {
    this.report.signal({ kind: 'retry_receipt', direction: 'sent' });
    const entry = this.watched.get(messageId);
    if (entry) entry.retries += 1;
    else if (!this.settled.has(messageId)) {
      if (this.earlyRetries.size >= MAX_WATCHED) this.earlyRetries.delete(this.earlyRetries.keys().next().value!);
      this.earlyRetries.set(messageId, (this.earlyRetries.get(messageId) ?? 0) + 1);
    }
  }

  /** A decrypted copy arrived. */
  recovered(messageId: string): void {
    const entry = this.watched.get(messageId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.watched.delete(messageId);
    this.settle(messageId);
  }

  /** The engine will ask no more: reported now. */
  exhausted(messageId: string): void {
    if (this.watched.has(messageId)) this.giveUp(messageId);
  }

  isWatched(messageId: string): boolean {
    return this.watched.has(messageId);
  }

  /** Stops following everything, reporting nothing (the session stopped). */
  close(): void {
    for (const entry of this.watched.values()) clearTimeout(entry.timer);
    this.watched.clear();
    this.earlyRetries.clear();
  }

  private giveUp(messageId: string): void {
    const entry = this.watched.get(messageId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.watched.delete(messageId);
    this.settle(messageId);
    const { message, retries } = entry;
    this.report.signal({ kind: 'exhausted', direction: 'incoming' });
    this.report.undecryptable({ messageId: message.messageId, chatId: message.chatId, sender: message.sender, kind: message.kind, retries, timestamp: isoTimestamp() });
  }

  private settle(messageId: string): void {
    if (this.settled.size >= MAX_SETTLED) this.settled.delete(this.settled.values().next().value!);
    this.settled.add(messageId);
  }
}
