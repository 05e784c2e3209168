// Backfill (issue 30): asks the phone for a chat's messages older than the oldest the gateway stores of it. The answer
// arrives later as history.sync events (ingested like any history); each session holds few requests at once and few a
// minute, so that no caller can flood the phone with them.
import { jidKind, normalizeJid } from '../engine/jid.js';
import { MAX_HISTORY_REQUEST } from '../engine/types.js';
import { SlidingWindowLimiter } from '../auth/sliding-window.js';
import { GatewayError, RateLimitedError, ValidationError } from '../errors.js';
import type { EngineEventProcessor, SessionManager } from '../sessions/manager.js';
import { storedChatOf } from '../chats/stored-chat.js';
import type { ChatsRepo } from '../store/chats.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { IdentitiesRepo } from '../store/identities.js';
import type { MessagesRepo } from '../store/messages.js';

export interface BackfillLimits {
  /** requests of one session not yet answered (nor expired) at once */
  inFlight: number;
  /** requests of one session within a minute */
  perMinute: number;
  /** a request counts as in flight until its answer arrives or this passes, ms */
  answerTimeoutMs: number;
}

export const DEFAULT_BACKFILL_LIMITS: BackfillLimits = { inFlight: 2, perMinute: 10, answerTimeoutMs: 60_000 };

export interface HistoryRequest {
  requestId: string;
  chatId: string;
  /** how many messages were asked for */
  count: number;
  /** the stored message the older ones were asked from: the oldest of the chat */
  before: { messageId: string; timestamp: string };
}

const MINUTE_MS = 60_000;

export class HistoryBackfill {
  /** session → request id → when it was sent (ms) */
  private readonly pending = new Map<string, Map<string, number>>();
  /** each session's requests of the last minute */
  private readonly perMinute = new SlidingWindowLimiter(MINUTE_MS);
  /** answers that arrived before their request's own call returned (session and request id) */
  private readonly answeredEarly = new Set<string>();
  private readonly limits: BackfillLimits;

  constructor(
    private readonly deps: {
      sessions: Pick<SessionManager, 'get' | 'connected'>;
      messages: Pick<MessagesRepo, 'oldestOfChat'>;
      contacts: Pick<ContactsRepo, 'findByLid'>;
      identities?: Pick<IdentitiesRepo, 'find'>;
      chats: Pick<ChatsRepo, 'get'>;
      limits?: Partial<BackfillLimits>;
      now?: () => number;
    },
  ) {
    this.limits = { ...DEFAULT_BACKFILL_LIMITS, ...deps.limits };
  }

  async request(session: string, chat: string, count: number = MAX_HISTORY_REQUEST): Promise<HistoryRequest> {
    await this.deps.sessions.get(session);
    if (!Number.isInteger(count) || count < 1 || count > MAX_HISTORY_REQUEST) throw ValidationError.field('/count', `must be 1–${MAX_HISTORY_REQUEST}`);
    const chatId = await this.chatOf(session, chat);
    const engine = await this.deps.sessions.connected(session);
    const oldest = await this.deps.messages.oldestOfChat(session, chatId);
    if (!oldest) {
      throw new GatewayError('NO_HISTORY_ANCHOR', `the gateway stores no message of ${chatId} to ask for older ones from; history is asked for from the oldest stored message of a chat`);
    }
    const now = this.now();
    this.admit(session, now);
    const anchor = {
      id: oldest.id,
      chatId: oldest.chatId,
      fromMe: oldest.fromMe,
      ...(!oldest.fromMe && oldest.sender && jidKind(oldest.chatId) === 'group' ? { participant: oldest.sender } : {}),
      ...(oldest.raw ? { raw: JSON.parse(oldest.raw) as unknown } : {}),
      timestamp: oldest.timestamp,
    };
    // the place is taken before the request leaves, and given back when it could not leave
    const placeholder = `pending:${now}:${Math.random()}`;
    this.pendingOf(session).set(placeholder, now);
    let requestId: string;
    try {
      ({ requestId } = await engine.requestHistory(anchor, count));
    } finally {
      this.pendingOf(session).delete(placeholder);
    }
    // an answer quicker than the request's own return has freed nothing yet: it is not counted again
    if (!this.answeredEarly.delete(`${session}\u0000${requestId}`)) this.pendingOf(session).set(requestId, now);
    return { requestId, chatId, count, before: { messageId: oldest.id, timestamp: new Date(oldest.timestamp).toISOString() } };
  }

  /** Frees the place of a request once its answer (a history.sync naming it) arrives. */
  answered(): EngineEventProcessor {
    return (session, type, payload) => {
      if (type !== 'history.sync' || typeof payload.requestId !== 'string') return;
      if (this.pending.get(session)?.delete(payload.requestId)) return;
      this.answeredEarly.add(`${session}\u0000${payload.requestId}`);
      if (this.answeredEarly.size > 1000) this.answeredEarly.delete(this.answeredEarly.values().next().value!);
    };
  }

  /** 429 when the session has too many requests unanswered, or made too many within the last minute; else counts this one. */
  private admit(session: string, now: number): void {
    const pending = this.pendingOf(session);
    for (const [id, at] of pending) if (now - at >= this.limits.answerTimeoutMs) pending.delete(id);
    if (pending.size >= this.limits.inFlight) {
      const oldest = Math.min(...pending.values());
      throw new RateLimitedError('RATE_LIMITED', `session ${session} has ${pending.size} history requests awaiting the phone's answer (at most ${this.limits.inFlight})`, (oldest + this.limits.answerTimeoutMs - now) / 1000);
    }
    this.perMinute.sweep(now);
    const minute = this.perMinute.hit(session, this.limits.perMinute, now);
    if (!minute.allowed) {
      throw new RateLimitedError('RATE_LIMITED', `session ${session} asked for history ${this.limits.perMinute} times within a minute, the most it may`, minute.retryAfterSeconds);
    }
  }

  private pendingOf(session: string): Map<string, number> {
    let pending = this.pending.get(session);
    if (!pending) {
      pending = new Map();
      this.pending.set(session, pending);
    }
    return pending;
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private async chatOf(session: string, chat: string): Promise<string> {
    const jid = normalizeJid(chat);
    if (!jid) throw ValidationError.field('/chatId', 'is not a chat');
    return storedChatOf(this.deps, session, jid);
  }
}
