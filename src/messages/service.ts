// Messaging operations of SPEC §4 "Messages": send (sync or async), edit, delete, react, typing, seen, star.
import { randomBytes, randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import { GatewayError, MessageRefusedError, notFound, RateLimitedError, ValidationError } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import { jidKind, jidRef, normalizeJid, phoneOfJid } from '../engine/jid.js';
import { nameSenders, type PairFinder } from './people.js';
import { contentFields, type MessagePayload } from '../engine/payloads.js';
import type { EngineSession, MessageRef, SendOptions, SentMessage, StagedFile, TypingState } from '../engine/types.js';
import type { Logger } from '../logger.js';
import type { MediaRecords } from '../media/records.js';
import type { SessionManager } from '../sessions/manager.js';
import type { MessageRow, MessagesRepo } from '../store/messages.js';
import type { ByteBudget } from '../media/fetch-limiter.js';
import { StreamedBase64 } from '../media/base64.js';
import { buildContent, checkContentFields, checkMentions, forCaller, MEDIA_URL_MAX_BYTES, type ContentFields, type MediaSource } from './content.js';
import type { Principal } from '../auth/scopes.js';
import { extraOf, keepEdit, keepFailure } from './ingest.js';
import { failedPayload } from '../engine/server-acks.js';
import type { MessageActivityRepo } from '../store/message-activity.js';
import { buildLinkPreview, type PreviewOutcome } from './link-preview.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { GovernorConfig } from '../config/types.js';
import type { QueuedSend, SendQueueRepo } from '../store/send-queue.js';
import { callerExempt, firstContactCap, isPersonChat, policyOf, type FirstContacts, type GovernorPolicy, type Pacer } from './governor.js';
import type { SendQueue } from './send-queue.js';
import { secondsUntilUtcMidnight } from '../timestamp.js';

export interface SendBody extends ContentFields {
  session: string;
  chatId: string;
  quotedMessage?: { messageId: string; chatId?: string; participant?: string; fromMe?: boolean };
  isForwarded?: boolean;
  /** a status post: who may see it (else the session's contacts) */
  statusViewers?: string[];
}

export interface PollVoteBody {
  session: string;
  chatId: string;
  pollMessageId: string;
  /** option names; empty withdraws the vote */
  options: string[];
}

/** The most people a status post goes to (WhatsApp's own apps cap the audience too; the list rides in one stanza). */
export const STATUS_VIEWERS_MAX = 1000;
export const STATUS_CHAT = 'status@broadcast';

/** Who asks: a client token never gets the private-URL opt-in, and quotes only messages of the chat it sends to. */
export interface SendCaller {
  client?: boolean;
  /** who sends: its URL downloads count towards its share of the download pool */
  principal?: Principal;
  /**
   * A held sync send's request waits for its turn in the queue: this gives back its in-flight place and takes one of the
   * caller's waiting places (the returned function gives it back); undefined when the caller has none left.
   */
  park?: () => (() => void) | undefined;
}

/**
 * What an async send may hold until it is done: its base64 text and decoded bytes (only the bytes when they were decoded
 * while the body streamed in), or a URL download at its limit (on disk, in a staged file of the blob store).
 */
function heldBytes(body: SendBody): number {
  const base64 = typeof body.base64 === 'string' ? body.base64.length + Math.ceil((body.base64.length * 3) / 4) : (body.base64?.data.length ?? 0);
  return 64 * 1024 + base64 + (body.url !== undefined ? MEDIA_URL_MAX_BYTES : 0);
}

export interface SendResult {
  messageId: string;
  status: string;
  timestamp: string;
  chatId: string;
  phoneNumber?: string;
  lid?: string;
  mediaId?: string;
  /** what became of the preview of the text's first link */
  linkPreview?: PreviewOutcome;
  /** a status post: how many people it went to */
  statusViewers?: number;
}

export interface VoteResult {
  messageId: string;
  pollMessageId: string;
  chatId: string;
  selectedOptions: string[];
  timestamp: string;
}

export interface StarBody {
  chatId: string;
  messageId: string;
  star?: boolean;
  fromMe?: boolean;
  participant?: string;
}

/** A stored message as the API shows it: no engine secrets or raw protocol bytes. */
export interface StoredMessage {
  messageId: string;
  chatId: string;
  sender: string | null;
  /** the sender's phone number (E.164) and LID, when the gateway knows them */
  senderPhoneNumber: string | null;
  senderLid: string | null;
  fromMe: boolean;
  type: string;
  text: string | null;
  mediaId: string | null;
  quotedMessageId: string | null;
  status: string;
  starred: boolean;
  revoked: boolean;
  edited: boolean;
  timestamp: string;
}

export function storedMessageView(row: MessageRow): StoredMessage {
  return {
    messageId: row.id,
    chatId: row.chatId,
    sender: row.sender,
    senderPhoneNumber: row.sender ? (phoneOfJid(row.sender) ?? null) : null,
    senderLid: row.sender && jidKind(row.sender) === 'lid' ? row.sender : null,
    fromMe: row.fromMe,
    type: row.type,
    text: row.text,
    mediaId: row.mediaId,
    quotedMessageId: row.quotedId,
    status: row.status,
    starred: row.starred,
    revoked: row.revoked,
    edited: row.edited,
    timestamp: new Date(row.timestamp).toISOString(),
  };
}

export class MessagingService {
  private readonly queues = new Map<string, PQueue>();

  constructor(
    private readonly deps: {
      sessions: SessionManager;
      messages: MessagesRepo;
      /** where the session's own edits, reactions and votes are kept with the message (those of others come as events) */
      activity: Pick<MessageActivityRepo, 'record'>;
      media: MediaRecords;
      /** the phone number ↔ LID pairs the session learnt: stored messages name their senders by both */
      identities?: PairFinder;
      /** where status posts find their viewers when the body names none */
      contacts?: Pick<ContactsRepo, 'unblockedPeople'>;
      bus: EventBus;
      mediaSource: MediaSource;
      /** media source for client tokens: never the private-URL opt-in */
      clientMediaSource?: MediaSource;
      /** bytes that accepted async sends may hold until they are done */
      asyncBudget?: ByteBudget;
      logger: Logger;
      /** opens the tick's write transaction, so a message's row and its event commit together (and cost one commit) */
      beginWrite?: () => void;
      /** the typing pause before a send (governor.typing, config.safeMode), ms, from the text length; replaceable in tests */
      safeModeDelay?: (textLength: number) => number;
      /** the send governor: its settings, the pace, today's first contacts, and the durable queue */
      governor?: {
        settings: GovernorConfig;
        pacer: Pacer;
        firstContacts: FirstContacts;
        queue: SendQueue;
        queueRepo: Pick<SendQueueRepo, 'recordFirstContact'>;
      };
    },
  ) {}

  /** Everything that can be checked before answering: body rules, chat id, session state. */
  async prepare(body: SendBody): Promise<{ chatId: string; engine: EngineSession; statusViewers?: string[] }> {
    checkContentFields(body);
    const chatId = normalizeChat(body.chatId, '/chatId');
    if (body.statusViewers !== undefined && chatId !== STATUS_CHAT) throw ValidationError.field('/statusViewers', `is only used by status posts (chatId ${STATUS_CHAT})`);
    const engine = await this.deps.sessions.connected(body.session);
    return { chatId, engine, ...(chatId === STATUS_CHAT ? { statusViewers: await this.statusViewers(body) } : {}) };
  }

  /**
   * Sends now when the governor allows it; else queues the send and answers once it went out (the request is held).
   * 429 SEND_CAP_REACHED when a cap forbids it today, 429 SEND_QUEUE_FULL when the session's queue is full.
   */
  async send(body: SendBody, caller: SendCaller = {}): Promise<SendResult> {
    const { chatId, statusViewers } = await this.prepare(body);
    const admission = await this.admit(body.session, chatId, caller);
    if (admission.queue) {
      const unpark = await this.park(body.session, chatId, caller, admission.firstContact);
      try {
        const { outcome } = await this.enqueue(body, chatId, caller, admission.firstContact, null);
        return (await outcome!) as unknown as SendResult;
      } finally {
        unpark();
      }
    }
    return this.sendNow(body, chatId, caller, statusViewers, { firstContact: admission.firstContact }).catch((err: unknown) => {
      if (admission.firstContact && !(err instanceof MessageRefusedError)) this.releaseFirstContact(body.session, chatId);
      throw err;
    });
  }

  private async sendNow(body: SendBody, chatId: string, caller: SendCaller, statusViewers: string[] | undefined, governed: Governed): Promise<SendResult> {
    const source = forCaller(caller.client ? (this.deps.clientMediaSource ?? this.deps.mediaSource) : this.deps.mediaSource, caller.principal);
    // a URL's media goes straight to a file of the blob store, which the sent message's media record then adopts
    const staging = body.url !== undefined ? this.deps.media.blobs.stage() : undefined;
    try {
      return await this.buildAndSend(body, chatId, source, caller, staging, statusViewers, governed);
    } finally {
      if (staging) this.deps.media.blobs.discard(staging);
    }
  }

  /** Sends an entry of the governor's queue under its message id; `recorded` completes the entry in its message's tick. */
  async sendQueued(entry: QueuedSend, recorded: () => void): Promise<SendResult> {
    const body = JSON.parse(entry.body) as SendBody;
    const caller = callerOf(JSON.parse(entry.caller) as StoredCaller);
    const { chatId, statusViewers } = await this.prepare(body);
    return this.sendNow(body, chatId, caller, statusViewers, { messageId: entry.messageId, recorded });
  }

  /** The result of a queued send whose message the store holds already (it went out before a crash), else undefined. */
  async sentBefore(entry: QueuedSend): Promise<SendResult | undefined> {
    const row = await this.deps.messages.find(entry.session, entry.messageId);
    if (!row || !row.fromMe) return undefined;
    return { messageId: row.id, status: row.status, timestamp: new Date(row.timestamp).toISOString(), chatId: row.chatId, ...(row.mediaId ? { mediaId: row.mediaId } : {}) };
  }

  /** The governor's policy for a session now (its config read again: a change applies to the next send). */
  async policy(session: string): Promise<GovernorPolicy> {
    return this.policyOfRow(await this.deps.sessions.get(session));
  }

  private policyOfRow(row: { config: Record<string, unknown> }): GovernorPolicy {
    return policyOf(this.deps.governor?.settings ?? UNGOVERNED, row.config);
  }

  /**
   * What the governor says of a send: now, or queued (behind others, or past the pace or the chat's gap); a first
   * message of the day to a person who never wrote is counted (reserved now, released if the send does not happen).
   */
  private async admit(session: string, chatId: string, caller: SendCaller): Promise<{ queue: boolean; firstContact: boolean }> {
    const governor = this.deps.governor;
    if (!governor) return { queue: false, firstContact: false };
    const row = await this.deps.sessions.get(session);
    const policy = this.policyOfRow(row);
    if (policy.exempt || callerExempt(caller.principal)) return { queue: false, firstContact: false };
    let firstContact = false;
    if (isPersonChat(chatId) && !(await this.deps.messages.hasCorrespondent(session, chatId))) {
      const today = await governor.firstContacts.today(session);
      if (!today.has(chatId)) {
        const now = Date.now();
        const cap = firstContactCap(policy, row.pairedAt, now);
        if (today.size >= cap.limit) {
          throw new RateLimitedError(
            'SEND_CAP_REACHED',
            `session ${session} wrote first to ${today.size} people who never wrote to it today, its cap ${cap.name} (${cap.limit} a day); the cap starts again at 00:00 UTC`,
            secondsUntilUtcMidnight(now),
            [{ path: cap.setting, message: `cap ${cap.name}: ${cap.limit} first messages a day to people who never wrote` }],
          );
        }
        today.add(chatId);
        firstContact = true;
      }
    }
    if (governor.queue.hasWaiting(session) || governor.pacer.waitMs(session, chatId, policy) > 0) return { queue: true, firstContact };
    governor.pacer.take(session, chatId, policy);
    return { queue: false, firstContact };
  }

  /** A held send's request waits, not works: 429 SEND_QUEUE_FULL when its caller holds as many waiting requests as it may. */
  private async park(session: string, chatId: string, caller: SendCaller, firstContact: boolean): Promise<() => void> {
    if (!caller.park) return () => {};
    const unpark = caller.park();
    if (unpark) return unpark;
    if (firstContact) this.releaseFirstContact(session, chatId);
    throw new RateLimitedError(
      'SEND_QUEUE_FULL',
      'this caller has as many sends held waiting for their turn as it may (server.maxRequestsInFlightPerKey); send with Prefer: respond-async to queue more (202, the outcome as a command.result event)',
      60 / (await this.policy(session)).perMinute,
      [{ path: '/headers/prefer', message: 'use respond-async to queue sends past the held ones' }],
    );
  }

  /** Writes the send into the session's queue (committed before it returns); its outcome settles once it is sent. */
  private async enqueue(body: SendBody, chatId: string, caller: SendCaller, firstContact: boolean, commandId: string | null) {
    const governor = this.deps.governor!;
    if (body.base64 instanceof StreamedBase64 && !body.base64.wellFormed) throw ValidationError.field('/base64', 'is not valid base64');
    const stored = JSON.stringify(body);
    try {
      const queued = await governor.queue.enqueue({
        session: body.session,
        messageId: newOutgoingMessageId(),
        chatId,
        type: body.type,
        firstContact,
        commandId,
        body: stored,
        caller: JSON.stringify(storedCaller(caller)),
        bytes: Buffer.byteLength(stored),
      });
      return queued;
    } catch (err) {
      if (firstContact) this.releaseFirstContact(body.session, chatId);
      throw err;
    }
  }

  /** The session's queued sends, next first. */
  queued(session: string, limit: number, offset: number) {
    return this.deps.governor ? this.deps.governor.queue.list(session, limit, offset) : Promise.resolve({ entries: [], total: 0 });
  }

  /** Cancels a queued send (404 QUEUE_ENTRY_NOT_FOUND, 409 QUEUE_ENTRY_SENDING). */
  async cancelQueued(session: string, id: string): Promise<void> {
    if (!this.deps.governor) throw notFound('QUEUE_ENTRY_NOT_FOUND', `queued send ${id} of session ${session}`);
    await this.deps.governor.queue.cancel(session, id);
  }

  /**
   * A counted first contact whose send did not happen (failed before it went out, cancelled) is counted no more. One
   * WhatsApp refused (MessageRefusedError) went out and is stored with its durable row: it keeps counting.
   */
  releaseFirstContact(session: string, chatId: string): void {
    void this.deps.governor?.firstContacts.today(session).then((today) => today.delete(chatId), () => undefined);
  }

  private async buildAndSend(body: SendBody, chatId: string, source: MediaSource, caller: SendCaller, staging: StagedFile | undefined, statusViewers: string[] | undefined, governed: Governed): Promise<SendResult> {
    let content = await buildContent(body, source, staging);
    let previewOutcome: PreviewOutcome | undefined;
    if (content.type === 'text' && body.linkPreview !== false) {
      const built = await buildLinkPreview(content.text, source);
      if (built.preview) content = { ...content, preview: built.preview };
      previewOutcome = built.outcome;
      if (built.outcome?.status === 'failed') this.deps.logger.info({ session: body.session, url: built.outcome.url, reason: built.outcome.reason }, 'link preview not built; the text goes without it');
    }
    const options: SendOptions = {
      ...(body.quotedMessage ? { quoted: await this.quotedRef(body.session, chatId, body.quotedMessage, caller.client ? 'chat' : 'session') } : {}),
      ...(body.mentions ? { mentions: checkMentions(body.mentions, body.text ?? body.caption) } : {}),
      ...(body.isForwarded ? { forwarded: true } : {}),
      ...(statusViewers ? { statusViewers } : {}),
      ...(governed.messageId ? { messageId: governed.messageId } : {}),
    };
    const session = body.session;
    const { sent, from } = await this.queueOf(session).add(async () => {
      const engine = await this.deps.sessions.connected(session);
      if ((await this.policy(session)).typing) await this.humanPause(engine, chatId, body.text?.length ?? body.caption?.length ?? 0, content.type === 'voice');
      // read before the send: once it is out, its receipts can come back, and they must find the row already written
      const sender = await this.ownRef(session);
      return { sent: await engine.sendMessage(chatId, content, options), from: sender };
    });
    const result = this.recordSent(session, sent, from, content, body, options, governed);
    // refused at once: stored as failed, with its failure and events; the caller gets the error
    if (sent.failure) throw new MessageRefusedError(sent.messageId, sent.failure);
    return { ...result, ...(previewOutcome ? { linkPreview: previewOutcome } : {}), ...(statusViewers ? { statusViewers: statusViewers.length } : {}) };
  }

  /**
   * Votes on a poll of the store (sent or received by the session); the options are names of the poll's options. The
   * vote goes to the poll's chat; message.vote reports it as the session's own.
   */
  async vote(body: PollVoteBody): Promise<VoteResult> {
    const chatId = normalizeChat(body.chatId, '/chatId');
    const engine = await this.deps.sessions.connected(body.session);
    const row = await this.deps.messages.find(body.session, body.pollMessageId, chatId);
    if (!row || row.revoked) throw new GatewayError('MESSAGE_NOT_FOUND', `poll ${body.pollMessageId} is not in chat ${chatId}`, [{ path: '/pollMessageId', message: 'no such poll in the message store' }]);
    const poll = row.type === 'poll' ? (row.extra?.poll as { options: string[]; multiSelect: boolean } | undefined) : undefined;
    if (!poll) throw ValidationError.field('/pollMessageId', 'is not a poll');
    const selected = [...new Set(body.options)];
    const unknown = selected.filter((o) => !poll.options.includes(o));
    if (unknown.length) throw ValidationError.field('/options', `are not options of the poll: ${unknown.join(', ')}`);
    if (!poll.multiSelect && selected.length > 1) throw ValidationError.field('/options', 'the poll allows one option only');
    // read before the vote goes out: once it has, only its record remains to be made, with no wait
    const voter = await this.ownRef(body.session);
    const cast = await this.queueOf(body.session).add(() => engine.votePoll(refOf(row), selected));
    this.deps.activity.record(body.session, { chatId: row.chatId, messageId: row.id, kind: 'vote', actor: voter.jid ?? '', value: JSON.stringify(selected), at: Date.parse(cast.timestamp) || Date.now() });
    this.deps.bus.emit(body.session, 'message.vote', { pollMessageId: row.id, chatId: row.chatId, voter, selectedOptions: selected, timestamp: cast.timestamp });
    return { messageId: cast.messageId, pollMessageId: row.id, chatId: row.chatId, selectedOptions: selected, timestamp: cast.timestamp };
  }

  /** `Prefer: respond-async`: checks now, sends in the background, reports through command.result. */
  async sendAsync(body: SendBody, caller: SendCaller = {}): Promise<AsyncAccepted> {
    const { chatId, statusViewers } = await this.prepare(body);
    const admission = await this.admit(body.session, chatId, caller);
    const commandId = randomUUID();
    if (admission.queue) {
      // held by the store, not in memory: the async byte budget does not count it (the queue has its own)
      const { entry, position } = await this.enqueue(body, chatId, caller, admission.firstContact, commandId);
      return { commandId, status: 'queued', queueId: entry.id, messageId: entry.messageId, position };
    }
    let release: () => void;
    try {
      release = this.deps.asyncBudget?.reserve(heldBytes(body)) ?? (() => {});
    } catch (err) {
      if (admission.firstContact) this.releaseFirstContact(body.session, chatId);
      throw err;
    }
    const sending = this.sendNow(body, chatId, caller, statusViewers, { firstContact: admission.firstContact }).catch((err: unknown) => {
      if (admission.firstContact && !(err instanceof MessageRefusedError)) this.releaseFirstContact(body.session, chatId);
      throw err;
    });
    void sending.finally(release).then(
      (result) => this.deps.bus.emit(body.session, 'command.result', { commandId, success: true, result }),
      (err: unknown) => {
        const error = err instanceof GatewayError ? err : new GatewayError('INTERNAL', (err as Error).message);
        if (!(err instanceof GatewayError)) this.deps.logger.error({ err, commandId }, 'async send failed');
        this.deps.bus.emit(body.session, 'command.result', { commandId, success: false, error: { code: error.code, message: error.message, ...(error.details?.length ? { details: error.details } : {}) } });
      },
    );
    return { commandId, status: 'accepted' };
  }

  async edit(session: string, messageId: string, text: string): Promise<void> {
    const row = await this.ownMessage(session, messageId, 'edit');
    if (row.type !== 'text') throw new GatewayError('VALIDATION_FAILED', `only text messages can be edited; ${messageId} is a ${row.type} message`, [{ path: '/messageId', message: 'is not a text message' }]);
    const from = await this.ownRef(session);
    await (await this.deps.sessions.connected(session)).editMessage(refOf(row), text);
    // no wait between the row's write and its event: they go into one tick
    this.deps.beginWrite?.();
    this.deps.messages.setText(session, row.chatId, row.id, text);
    const at = Date.now();
    keepEdit(this.deps.activity, session, row.chatId, row.id, text, at);
    this.deps.bus.emit(session, 'message.edited', { messageId, chatId: row.chatId, from, fromMe: true, text, timestamp: new Date(at).toISOString() });
  }

  async delete(session: string, messageId: string): Promise<void> {
    const row = await this.ownMessage(session, messageId, 'delete');
    const from = await this.ownRef(session);
    await (await this.deps.sessions.connected(session)).deleteMessage(refOf(row));
    this.deps.beginWrite?.();
    this.deps.messages.markRevoked(session, row.chatId, row.id);
    this.deps.bus.emit(session, 'message.revoked', { messageId, chatId: row.chatId, from, fromMe: true, timestamp: new Date().toISOString() });
  }

  async react(session: string, body: { chatId: string; messageId: string; reaction: string }): Promise<void> {
    const chatId = normalizeChat(body.chatId, '/chatId');
    const engine = await this.deps.sessions.connected(session);
    const row = await this.deps.messages.find(session, body.messageId, chatId);
    const from = await this.ownRef(session);
    await engine.react(row ? refOf(row) : { id: body.messageId, chatId, fromMe: false }, body.reaction);
    const at = Date.now();
    this.deps.activity.record(session, { chatId, messageId: body.messageId, kind: 'reaction', actor: from.jid ?? '', value: body.reaction, at });
    this.deps.bus.emit(session, 'message.reaction', {
      messageId: body.messageId,
      chatId,
      from,
      fromMe: true,
      reaction: body.reaction,
      timestamp: new Date(at).toISOString(),
    });
  }

  /** Settles once the session is found connected; the indicator goes out in the background. */
  async typing(session: string, body: { chatId: string; state: string }): Promise<void> {
    const chatId = normalizeChat(body.chatId, '/chatId');
    const engine = await this.deps.sessions.connected(session);
    const state: TypingState = body.state === 'typing' ? 'composing' : (body.state as TypingState);
    engine.sendTyping(chatId, state).catch((err: unknown) => this.deps.logger.warn({ err, session, chatId }, 'typing indicator failed'));
  }

  async seen(session: string, body: { chatId: string; messageId: string }): Promise<void> {
    const chatId = normalizeChat(body.chatId, '/chatId');
    const engine = await this.deps.sessions.connected(session);
    const row = await this.deps.messages.find(session, body.messageId, chatId);
    await engine.markSeen(row ? refOf(row) : { id: body.messageId, chatId, fromMe: false });
  }

  async star(session: string, body: StarBody): Promise<boolean> {
    const chatId = normalizeChat(body.chatId, '/chatId');
    const engine = await this.deps.sessions.connected(session);
    const row = await this.deps.messages.find(session, body.messageId, chatId);
    const participant = body.participant ? normalizeChat(body.participant, '/participant') : undefined;
    const fromMe = body.fromMe ?? row?.fromMe;
    if (fromMe === undefined) {
      throw ValidationError.field('/fromMe', 'is required for a message the gateway has not stored');
    }
    if (!fromMe && chatId.endsWith('@g.us') && !participant && !row?.sender) {
      throw ValidationError.field('/participant', 'is required for group messages the session did not send');
    }
    const star = body.star ?? true;
    const ref: MessageRef = row ? { ...refOf(row), fromMe } : { id: body.messageId, chatId, fromMe, ...(participant ? { participant } : {}) };
    await engine.star(ref, star);
    this.deps.beginWrite?.();
    if (row) this.deps.messages.setStarred(session, chatId, row.id, star);
    this.deps.bus.emit(session, 'message.update', { messageId: body.messageId, chatId, starred: star, timestamp: new Date().toISOString() });
    return star;
  }

  /** Forgets a deleted session's send queue. */
  forget(session: string): void {
    this.queues.delete(session);
    this.deps.governor?.pacer.forget(session);
    this.deps.governor?.firstContacts.forget(session);
    this.deps.governor?.queue.forget(session);
  }

  /** The messages the store holds for a session, newest first (what the console shows). */
  async recent(session: string, limit: number, offset: number): Promise<{ messages: StoredMessage[]; total: number }> {
    await this.deps.sessions.get(session);
    const { rows, total } = await this.deps.messages.recent(session, limit, offset);
    return { messages: await nameSenders(this.deps.identities, session, rows.map(storedMessageView)), total };
  }

  /** Whether `jid` has written to the session (client-token "conversation" mode). */
  hasWrittenTo(session: string, jid: string): Promise<boolean> {
    return this.deps.messages.hasCorrespondent(session, jid);
  }

  // ---- internals ----

  /** Writes the sent message, its media record and its event, with no wait: in one tick, right behind the send. */
  private recordSent(session: string, sent: SentMessage, from: Awaited<ReturnType<MessagingService['ownRef']>>, content: Awaited<ReturnType<typeof buildContent>>, body: SendBody, options: SendOptions, governed: Governed): SendResult {
    this.deps.beginWrite?.();
    // in the message's tick: a queued send's entry is completed with it, a first contact sent at once is counted with it
    governed.recorded?.();
    if (governed.firstContact) this.deps.governor?.queueRepo.recordFirstContact(session, randomUUID(), sent.messageId, sent.chatId, content.type, Date.parse(sent.timestamp) || Date.now());
    const fields = contentFields(content);
    let mediaId: string | undefined;
    if (fields.media) {
      mediaId = this.deps.media.record(session, sent.messageId, sent.chatId, fields.media).id;
      delete fields.media;
    }
    const at = Date.parse(sent.timestamp) || Date.now();
    this.deps.messages.insert({
      session,
      chatId: sent.chatId,
      id: sent.messageId,
      sender: null,
      fromMe: true,
      type: content.type,
      text: fields.text ?? fields.caption ?? null,
      mediaId: mediaId ?? null,
      quotedId: options.quoted?.id ?? null,
      status: sent.status,
      secret: sent.secret ?? null,
      extra: extraOf(fields),
      raw: sent.raw === undefined ? null : JSON.stringify(sent.raw),
      timestamp: at,
    });
    const payload = {
      ...fields,
      messageId: sent.messageId,
      chatId: sent.chatId,
      from,
      fromMe: true,
      isGroup: sent.chatId.endsWith('@g.us'),
      timestamp: sent.timestamp,
      ...(mediaId ? { mediaId, mimeType: (content as { media: { mimeType: string } }).media.mimeType } : {}),
      ...(options.quoted ? { quotedMessageId: options.quoted.id } : {}),
      ...(options.mentions?.length ? { mentions: options.mentions } : {}),
      ...(body.isForwarded ? { isForwarded: true } : {}),
      status: sent.status,
    } satisfies Partial<MessagePayload>;
    this.deps.bus.emit(session, 'message.sent', payload);
    if (sent.failure) {
      const failedAt = Date.now();
      keepFailure(this.deps.activity, session, sent.chatId, sent.messageId, sent.failure, failedAt);
      this.deps.bus.emit(session, 'message.failed', failedPayload(sent.messageId, sent.chatId, sent.failure, failedAt));
    }
    return {
      messageId: sent.messageId,
      status: sent.status,
      timestamp: sent.timestamp,
      chatId: sent.chatId,
      ...(sent.phoneNumber ? { phoneNumber: sent.phoneNumber } : {}),
      ...(sent.lid ? { lid: sent.lid } : {}),
      ...(mediaId ? { mediaId } : {}),
    };
  }

  /** The viewers of a status post: the body's list, else the session's unblocked contacts (the most recent, capped). */
  private async statusViewers(body: SendBody): Promise<string[]> {
    if (body.statusViewers) {
      if (body.statusViewers.length > STATUS_VIEWERS_MAX) throw ValidationError.field('/statusViewers', `must have at most ${STATUS_VIEWERS_MAX} items`);
      const viewers = body.statusViewers.map((raw, i) => {
        const jid = normalizeJid(raw);
        if (!jid || !/@(s\.whatsapp\.net|lid)$/.test(jid)) throw ValidationError.field(`/statusViewers/${i}`, 'is not a person (phone number or JID)');
        return jid;
      });
      return [...new Set(viewers)];
    }
    const known = (await this.deps.contacts?.unblockedPeople(body.session, STATUS_VIEWERS_MAX)) ?? [];
    if (!known.length) throw ValidationError.field('/statusViewers', 'is required: the session knows no contacts to show the status to yet');
    return known;
  }

  private async quotedRef(session: string, chatId: string, quoted: NonNullable<SendBody['quotedMessage']>, scope: QuoteScope): Promise<MessageRef> {
    const quotedChat = quoted.chatId ? normalizeChat(quoted.chatId, '/quotedMessage/chatId') : chatId;
    if (scope === 'chat') {
      // a quote carries the quoted text to the recipient: a client token must not copy another chat's messages into its
      // own, nor learn which ids exist there (the same 404 as an unknown message)
      const notInChat = () =>
        new GatewayError('MESSAGE_NOT_FOUND', `quoted message ${quoted.messageId} is not in chat ${chatId}`, [
          { path: '/quotedMessage/messageId', message: 'not found in the chat being sent to' },
        ]);
      if (quotedChat !== chatId) throw notInChat();
      const row = await this.deps.messages.find(session, quoted.messageId, chatId);
      if (row) return refOf(row);
      if ((await this.deps.messages.find(session, quoted.messageId)) || quoted.fromMe === undefined) throw notInChat();
      return { id: quoted.messageId, chatId, fromMe: quoted.fromMe, ...(quoted.participant ? { participant: normalizeChat(quoted.participant, '/quotedMessage/participant') } : {}) };
    }
    const row = (await this.deps.messages.find(session, quoted.messageId, quotedChat)) ?? (await this.deps.messages.find(session, quoted.messageId));
    if (row) return refOf(row);
    if (quoted.fromMe === undefined) {
      throw new GatewayError('MESSAGE_NOT_FOUND', `quoted message ${quoted.messageId} is not in the message store; give quotedMessage.fromMe (and participant in groups) to quote it anyway`, [
        { path: '/quotedMessage/messageId', message: 'not found in the message store' },
      ]);
    }
    return { id: quoted.messageId, chatId: quotedChat, fromMe: quoted.fromMe, ...(quoted.participant ? { participant: normalizeChat(quoted.participant, '/quotedMessage/participant') } : {}) };
  }

  private async ownMessage(session: string, messageId: string, action: string): Promise<MessageRow> {
    await this.deps.sessions.connected(session);
    const row = await this.deps.messages.find(session, messageId);
    if (!row) throw notFound('MESSAGE_NOT_FOUND', `message ${messageId}`);
    if (!row.fromMe) throw new GatewayError('NOT_MESSAGE_OWNER', `cannot ${action} message ${messageId}: only messages this session sent`);
    if (row.revoked) throw new GatewayError('MESSAGE_NOT_FOUND', `message ${messageId} was deleted`);
    return row;
  }

  private async ownRef(session: string) {
    const row = await this.deps.sessions.get(session);
    const digits = row.phoneNumber?.slice(1) ?? '';
    return jidRef(`${digits}@s.whatsapp.net`, row.lid ? { lid: row.lid } : {});
  }

  private async humanPause(engine: EngineSession, chatId: string, textLength: number, voice: boolean): Promise<void> {
    const delay = (this.deps.safeModeDelay ?? defaultSafeModeDelay)(textLength);
    await engine.sendTyping(chatId, voice ? 'recording' : 'composing').catch(() => undefined);
    await new Promise((r) => setTimeout(r, delay));
    await engine.sendTyping(chatId, 'paused').catch(() => undefined);
  }

  private queueOf(session: string): PQueue {
    let queue = this.queues.get(session);
    if (!queue) {
      queue = new PQueue({ concurrency: 1 });
      this.queues.set(session, queue);
    }
    return queue;
  }
}

/** What the governor asked of a send: the id chosen when it was queued, its entry's completion, a first contact to count. */
interface Governed {
  messageId?: string;
  recorded?: () => void;
  firstContact?: boolean;
}

/** The answer to an accepted `Prefer: respond-async` send: sending now (`accepted`), or waiting in the queue (`queued`). */
export type AsyncAccepted =
  | { commandId: string; status: 'accepted' }
  | { commandId: string; status: 'queued'; queueId: string; messageId: string; position: number };

/** The governor's settings when it is not configured (a MessagingService made without one): nothing but typing. */
const UNGOVERNED: GovernorConfig = {
  enabled: false,
  perMinute: 1,
  burst: 1,
  jitterPercent: 0,
  recipientGapSeconds: 0,
  firstContactsPerDay: 0,
  warmup: [],
  typing: false,
  queueMaxEntries: 1,
  queueMaxBytes: 1,
};

/** Who queued a send, as the queue keeps it: enough to fetch its URL media under the same policy and share later. */
type StoredCaller = { client: boolean; principal?: Principal extends infer P ? (P extends { kind: 'key' } ? { kind: 'key'; id: string; family: string; name: string } : P) : never };

function storedCaller(caller: SendCaller): StoredCaller {
  const p = caller.principal;
  if (p?.kind === 'key') return { client: caller.client === true, principal: { kind: 'key', id: p.id, family: p.family, name: p.name } };
  return { client: caller.client === true, ...(p ? { principal: p } : {}) };
}

function callerOf(stored: StoredCaller): SendCaller {
  const p = stored.principal;
  if (p?.kind === 'key') return { client: stored.client, principal: { ...p, scopes: new Set(), sessions: null, rateLimitPerMinute: null } };
  return { client: stored.client, ...(p ? { principal: p as Principal } : {}) };
}

/** A message id shaped like the network's (3EB0 and 20 hex digits), chosen by the gateway for a queued send. */
export function newOutgoingMessageId(): string {
  return `3EB0${randomBytes(10).toString('hex').toUpperCase()}`;
}

/** 0.4 s plus 30 ms a character, at most 3 s: about how long a person takes to type. */
export function defaultSafeModeDelay(textLength: number): number {
  return Math.min(3000, 400 + textLength * 30);
}

/**
 * Which messages a send may quote: `session`, any message of the session (API keys and the master key: WhatsApp's
 * "reply privately" quotes a group message in a direct chat); `chat`, only one of the chat being sent to (client tokens).
 */
export type QuoteScope = 'session' | 'chat';

function refOf(row: MessageRow): MessageRef {
  return {
    id: row.id,
    chatId: row.chatId,
    fromMe: row.fromMe,
    ...(!row.fromMe && row.sender && row.chatId.endsWith('@g.us') ? { participant: row.sender } : {}),
    type: row.type,
    ...(row.text ? { text: row.text } : {}),
    ...(row.raw ? { raw: JSON.parse(row.raw) } : {}),
  };
}

function normalizeChat(raw: string, path: string): string {
  const jid = normalizeJid(raw);
  if (!jid) throw ValidationError.field(path, 'is not a valid JID or phone number');
  return jid;
}
