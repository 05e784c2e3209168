// The network's answer to each sent message (issue 31): a server ack (`sent`), a refusal with an error code (`failed`
// with a reason), or none within a documented time (`failed`, reason `timeout`). Shared by both engines, so what a send
// answers and which events follow are the same whichever engine learnt the answer.
import { DEFAULT_CONFIG } from '../config/defaults.js';
import type { EventType } from '../events/catalogue.js';
import type { DeliveryStatus } from './types.js';

/** Why a sent message failed (docs/API.md "Message status"). */
export type FailureReason = 'rate_limited' | 'reachout_timelocked' | 'not_on_whatsapp' | 'recipient_unreachable' | 'decryption_retry_exhausted' | 'timeout' | 'refused';
export const FAILURE_REASONS: readonly FailureReason[] = ['rate_limited', 'reachout_timelocked', 'not_on_whatsapp', 'recipient_unreachable', 'decryption_retry_exhausted', 'timeout', 'refused'];

/** A message's failure: its reason, the network's code when it gave one, and words on it. */
export interface MessageFailure {
  reason: FailureReason;
  code?: string;
  detail?: string;
}

/**
 * The reason of a server ack's error code: 429 rate-overlimit; 463 the reach-out timelock (Baileys'
 * MessageAccountRestriction: a 1:1 message without the trusted-contact token, refused while the account may not start
 * new chats); 404 no such account; 479 smax-invalid (a stale device list or addressing the server refused) and 403 (the
 * recipient does not accept it) are the recipient's side; any other code is `refused`, with the code.
 */
export function failureOfCode(code: string): MessageFailure {
  // what a server sends is not trusted to be a number: anything else is words on a refusal, not a code
  if (!/^\d{1,6}$/.test(code)) return { reason: 'refused', detail: `error ${JSON.stringify(code.slice(0, 64))}` };
  const reason: FailureReason = ({ '429': 'rate_limited', '463': 'reachout_timelocked', '404': 'not_on_whatsapp', '479': 'recipient_unreachable', '403': 'recipient_unreachable' } as Record<string, FailureReason>)[code] ?? 'refused';
  return { reason, code };
}

export interface ServerAckTiming {
  /** how long a send waits for the answer before it answers `pending` (messages.sendAckWaitMs) */
  waitMs: number;
  /** no answer within this time: the message failed with reason `timeout` (messages.serverAckTimeoutMs) */
  timeoutMs: number;
}

/** the configuration's defaults (messages.*), for sessions made without settings (tests) */
export const DEFAULT_SERVER_ACK_TIMING: ServerAckTiming = { waitMs: DEFAULT_CONFIG.messages.sendAckWaitMs, timeoutMs: DEFAULT_CONFIG.messages.serverAckTimeoutMs };

/** What a send answers: the status the network's answer gave it within the wait. */
export type SendOutcome = { status: 'sent' | 'pending' } | { status: 'failed'; failure: MessageFailure };

type Answer = { ok: true } | { ok: false; failure: MessageFailure };

interface Expected {
  chatId: string;
  /** the timeout, counted from when the message was written to the socket */
  timer?: NodeJS.Timeout;
  /** set while the send waits; cleared once it answered (later answers become events) */
  waiter?: (answer: Answer | undefined) => void;
  /** settles a turn of the event loop after the send answered: its record is written by then */
  handedOver?: Promise<void>;
  /** the answer came before the send began to wait for it */
  early?: Answer;
}

/** timed-out messages remembered so that a late answer still moves them on */
const LATE_MAX = 10_000;

export class ServerAcks {
  private readonly expected = new Map<string, Expected>();
  private readonly late = new Map<string, string>();

  constructor(
    private readonly timing: ServerAckTiming,
    private readonly report: (type: EventType, payload: Record<string, unknown>) => void,
  ) {}

  /** A message is about to leave: its answer is expected (an answer that beats the send's return is kept for it). */
  expect(messageId: string, chatId: string): void {
    // a message sent again under its id (a queued send's retry) starts afresh
    this.forget(messageId);
    this.late.delete(messageId);
    this.expected.set(messageId, { chatId });
  }

  /** The chat the events name (the send settled on the phone JID of a person it named by LID). */
  rename(messageId: string, chatId: string): void {
    const entry = this.expected.get(messageId);
    if (entry) entry.chatId = chatId;
  }

  /** The send did not leave: nothing is expected of it. */
  forget(messageId: string): void {
    const entry = this.expected.get(messageId);
    if (entry) clearTimeout(entry.timer);
    this.expected.delete(messageId);
  }

  /**
   * The message was written to the socket: waits for the answer, a while at most (an answer after that is reported as an
   * event), and fails it with `timeout` when none comes within the timeout, counted from now.
   */
  async outcome(messageId: string): Promise<SendOutcome> {
    const entry = this.expected.get(messageId);
    if (!entry) return { status: 'pending' };
    if (!entry.early) {
      entry.timer = setTimeout(() => this.timedOut(messageId), this.timing.timeoutMs);
      entry.timer.unref();
    }
    const answer = entry.early ? this.take(messageId, entry.early) : await new Promise<Answer | undefined>((resolve) => {
      const settle = (answer: Answer | undefined) => {
        clearTimeout(wait);
        entry.waiter = undefined;
        // what comes after this is reported once the send's record is written: a turn of the event loop later
        entry.handedOver = new Promise((done) => setImmediate(done));
        resolve(answer);
      };
      const wait = setTimeout(() => settle(undefined), this.timing.waitMs);
      entry.waiter = settle;
    });
    if (!answer) return { status: 'pending' };
    return answer.ok ? { status: 'sent' } : { status: 'failed', failure: answer.failure };
  }

  /** The network acked (`error` absent) or refused (`error`: its code) a message. Unknown ids are not the gateway's sends. */
  answer(messageId: string, error?: string, detail?: string): void {
    const answer: Answer = error ? { ok: false, failure: { ...failureOfCode(error), ...(detail ? { detail } : {}) } } : { ok: true };
    const entry = this.expected.get(messageId);
    if (entry) {
      if (!entry.waiter && !entry.handedOver) {
        entry.early = answer;
        return;
      }
      this.forget(messageId);
      if (entry.waiter) entry.waiter(answer);
      else void (entry.handedOver ?? Promise.resolve()).then(() => this.reportAnswer(messageId, entry.chatId, answer));
      return;
    }
    // the truth wins: an answer after the timeout moves the message on (a late ack: sent; a late refusal: its reason)
    const chatId = this.late.get(messageId);
    if (chatId === undefined) return;
    this.late.delete(messageId);
    this.reportAnswer(messageId, chatId, answer);
  }

  private take(messageId: string, answer: Answer): Answer {
    this.forget(messageId);
    return answer;
  }

  private timedOut(messageId: string): void {
    const entry = this.expected.get(messageId);
    if (!entry) return;
    this.expected.delete(messageId);
    // a timeout shorter than the wait: the send answers pending, and its failure follows as an event
    entry.waiter?.(undefined);
    void (entry.handedOver ?? Promise.resolve()).then(() => this.report('message.failed', failedPayload(messageId, entry.chatId, this.timeoutFailure())));
    this.late.set(messageId, entry.chatId);
    if (this.late.size > LATE_MAX) this.late.delete(this.late.keys().next().value!);
  }

  private timeoutFailure(): MessageFailure {
    return { reason: 'timeout', detail: `no server ack within ${this.timing.timeoutMs} ms` };
  }

  private reportAnswer(messageId: string, chatId: string, answer: Answer): void {
    if (answer.ok) this.report('message.ack', { messageId, chatId, status: 'sent' satisfies DeliveryStatus, timestamp: new Date().toISOString() });
    else this.report('message.failed', failedPayload(messageId, chatId, answer.failure));
  }
}

/** The message.failed payload (docs/EVENTS.md). */
export function failedPayload(messageId: string, chatId: string, failure: MessageFailure, at = Date.now()): Record<string, unknown> {
  return { messageId, chatId, ...failure, timestamp: new Date(at).toISOString() };
}
