// Messaging of one open sandbox account: routes its messages, acks, edits, revokes, reactions and chat states through the network.
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { isoTimestamp } from '../../timestamp.js';
import { jidKind, jidRef, jidUser, type JidRef } from '../jid.js';
import { contentFields, type MessagePayload } from '../payloads.js';
import type { DecryptionFailureKind } from '../decryption.js';
import type { CastVote, DeliveryStatus, HistoryAnchor, MessageRef, OutgoingContent, SendOptions, SentMessage, TypingState } from '../types.js';
import { isRegisteredNumber, type MessageTrace, type OlderMessage, type SandboxNetwork } from './network.js';
import type { SandboxSession } from './session.js';

const VIRTUAL_DELIVERED_MS = 20;
const VIRTUAL_READ_MS = 200;

const ID_PREFIX = `3EB0${randomBytes(4).toString('hex').toUpperCase()}`;
let idCounter = 0;

/** Ids shaped like the network's (3EB0 + 20 hex digits): a random per-daemon prefix and a counter. */
export function newMessageId(): string {
  idCounter += 1;
  return ID_PREFIX + idCounter.toString(16).toUpperCase().padStart(12, '0');
}

/** How a chat id resolves on the network. */
type Target =
  | { kind: 'user'; digits: string; byLid: boolean; registered: boolean }
  | { kind: 'group'; groupId: string }
  | { kind: 'channel'; channelId: string }
  | { kind: 'status' };

export class SandboxMessenger {
  constructor(
    private readonly network: SandboxNetwork,
    readonly digits: string,
    private readonly session: SandboxSession,
  ) {}

  ref(digits: string): JidRef {
    return jidRef(`${digits}@s.whatsapp.net`, { lid: this.network.lidOf(digits) });
  }

  async send(chatId: string, content: OutgoingContent, options: SendOptions): Promise<SentMessage> {
    const target = this.resolve(chatId);
    const id = options.messageId ?? newMessageId();
    this.network.wire(this.digits, id, chatId);
    const timestamp = isoTimestamp();
    const recipients = target.kind === 'status' ? this.viewersOf(options.statusViewers ?? []) : this.recipientsOf(target);
    const trace: MessageTrace = {
      id,
      senderDigits: this.digits,
      chatId,
      recipients,
      addressedByLid: target.kind === 'user' && target.byLid,
      ...(target.kind === 'group' ? { groupId: target.groupId } : {}),
      ...(content.type === 'poll' ? { poll: { options: content.options, multiSelect: content.multiSelect } } : {}),
    };
    this.network.remember(trace);

    const base = contentFields(content);
    const common = {
      messageId: id,
      fromMe: false,
      isGroup: target.kind === 'group',
      timestamp,
      ...base,
      ...(options.quoted ? { quotedMessageId: options.quoted.id } : {}),
      ...(options.mentions?.length ? { mentions: options.mentions } : {}),
      ...(options.forwarded ? { isForwarded: true } : {}),
    };
    const sent: SentMessage = { messageId: id, timestamp, status: 'pending', chatId };
    if (target.kind === 'user' && target.registered) {
      sent.phoneNumber = `+${target.digits}`;
      sent.lid = this.network.lidOf(target.digits);
      // the network's device lookup tells the sender the pair, as WhatsApp's usync does; the chat is named by the number
      this.session.learn(target.digits, sent.lid, 'lookup');
      sent.chatId = this.session.canonicalChat(chatId);
    } else if (target.kind === 'user' && !target.byLid) {
      sent.phoneNumber = `+${target.digits}`;
      sent.lid = this.network.lidOf(target.digits);
    }
    // the network's answer first (an ack, a refusal, or none), then the deliveries, a turn later: the send is recorded by then
    const acks = this.session.serverAcks;
    acks.expect(id, sent.chatId);
    const deliver = () => {
      acks.answer(id);
      // a recipient may ask for it again (a decryption fault): it is re-sent, or fails, before it is delivered
      setImmediate(() => this.session.decryptionFaults.sending(id, sent.chatId, () => this.deliverTo(trace, target, recipients, common)));
    };
    const fault = this.session.faults.take([chatId, sent.chatId]);
    if (fault?.kind === 'nack') setImmediate(() => acks.answer(id, fault.code));
    else if (fault?.kind === 'no-ack') this.session.faults.withhold(deliver);
    else setImmediate(deliver);
    return { ...sent, ...(await acks.outcome(id)) };
  }

  /** The message reaches its recipients (the accounts online, and the virtual contacts, who ack it). */
  private deliverTo(trace: MessageTrace, target: Target, recipients: string[], common: Record<string, unknown>): void {
    for (const digits of recipients) {
      const recipient = this.network.sessionFor(digits);
      if (recipient) {
        // a channel post reaches its followers from the channel itself, and the network sends no per-follower acks
        const payload: MessagePayload = { ...common, chatId: this.chatSeenBy(trace), from: this.authorSeenBy(trace) } as MessagePayload;
        recipient.deliver('message.received', payload as unknown as Record<string, unknown>);
        if (target.kind !== 'channel') this.ack(trace, 'delivered', digits);
      } else if (target.kind === 'user' && target.registered) {
        setTimeout(() => this.ack(trace, 'delivered', digits), VIRTUAL_DELIVERED_MS).unref();
        setTimeout(() => this.ack(trace, 'read', digits), VIRTUAL_READ_MS).unref();
      }
    }
  }

  edit(target: MessageRef, text: string): void {
    const trace = this.ownTrace(target);
    this.broadcast(trace, 'message.edited', (chatId) => ({ messageId: trace.id, chatId, from: this.authorSeenBy(trace), fromMe: false, text, timestamp: now() }));
  }

  revoke(target: MessageRef): void {
    const trace = this.ownTrace(target);
    this.broadcast(trace, 'message.revoked', (chatId) => ({ messageId: trace.id, chatId, from: this.authorSeenBy(trace), fromMe: false, timestamp: now() }));
  }

  react(target: MessageRef, emoji: string): void {
    const trace = this.network.trace(target.id);
    if (!trace) return;
    const participants = this.conversationOf(trace).filter((d) => d !== this.digits);
    for (const digits of participants) {
      this.network.sessionFor(digits)?.deliver('message.reaction', {
        messageId: trace.id,
        chatId: this.chatFor(trace, digits),
        from: this.ref(this.digits),
        fromMe: false,
        reaction: emoji,
        timestamp: now(),
      });
    }
  }

  typing(chatId: string, state: TypingState): void {
    if (jidKind(chatId) === 'newsletter') return; // channels show no chat states, whoever types in them
    const target = this.resolve(chatId);
    for (const digits of this.recipientsOf(target)) {
      this.network.sessionFor(digits)?.deliver('presence.update', {
        from: target.kind === 'group' ? jidRef(target.groupId) : this.ref(this.digits),
        ...(target.kind === 'group' ? { sender: this.ref(this.digits) } : {}),
        state: state === 'paused' ? 'paused' : 'composing',
        unavailable: false,
        ...(state === 'recording' ? { media: 'audio' } : {}),
      });
    }
  }

  seen(target: MessageRef): void {
    const trace = this.network.trace(target.id);
    if (!trace || trace.senderDigits === this.digits || isChannelTrace(trace)) return;
    this.network.sessionFor(trace.senderDigits)?.messenger?.ack(trace, 'read', this.digits);
  }

  /** A vote on a poll the network carried: the poll's other participants receive it. */
  votePoll(poll: MessageRef, selectedOptions: string[]): CastVote {
    const trace = this.network.trace(poll.id);
    if (!trace?.poll || !this.conversationOf(trace).includes(this.digits)) throw new GatewayError('MESSAGE_NOT_FOUND', `poll ${poll.id} is not in a conversation of this session`);
    const timestamp = now();
    for (const digits of this.conversationOf(trace).filter((d) => d !== this.digits)) {
      this.network.sessionFor(digits)?.deliver('message.vote', { pollMessageId: trace.id, chatId: this.chatFor(trace, digits), voter: this.ref(this.digits), selectedOptions, timestamp });
    }
    return { messageId: newMessageId(), timestamp };
  }

  /** An acknowledgement from `byDigits` reaches this (sending) account. */
  ack(trace: MessageTrace, status: DeliveryStatus, byDigits: string): void {
    this.session.deliver('message.ack', { messageId: trace.id, chatId: trace.chatId, status, by: this.ref(byDigits), timestamp: now() });
  }

  // ---- virtual contacts acting on this account (sandbox control routes) ----

  /** `senderLidOnly`: the network names the sender (of a 1:1 message) by LID only, as WhatsApp does in LID-addressed chats. */
  receiveFromContact(fromDigits: string, groupId: string | undefined, content: OutgoingContent, options: SendOptions, senderLidOnly = false, id = newMessageId()): string {
    if (groupId) this.requireGroup(groupId);
    const byLid = senderLidOnly && !groupId;
    const from = byLid ? this.session.personByLid(this.network.lidOf(fromDigits)) : this.ref(fromDigits);
    this.network.remember({
      id,
      senderDigits: fromDigits,
      chatId: groupId ?? `${this.digits}@s.whatsapp.net`,
      recipients: [this.digits],
      addressedByLid: byLid,
      ...(groupId ? { groupId } : {}),
      ...(content.type === 'poll' ? { poll: { options: content.options, multiSelect: content.multiSelect } } : {}),
    });
    const payload = {
      messageId: id,
      chatId: groupId ?? from.jid,
      from,
      fromMe: false,
      isGroup: groupId !== undefined,
      timestamp: now(),
      ...contentFields(content),
      ...(options.quoted ? { quotedMessageId: options.quoted.id } : {}),
      ...(options.mentions?.length ? { mentions: options.mentions } : {}),
      ...(options.forwarded ? { isForwarded: true } : {}),
    };
    this.session.deliver('message.received', payload);
    return id;
  }

  /**
   * A virtual contact's message that the session cannot decrypt (of kind `kind`): the session asks the contact for it
   * again, and the contact answers with a copy that decrypts (`recovered`) or never answers.
   */
  receiveUndecryptable(fromDigits: string, content: OutgoingContent, kind: DecryptionFailureKind, recovered: boolean): string {
    const id = newMessageId();
    const sender = this.ref(fromDigits);
    const resend = () => this.receiveFromContact(fromDigits, undefined, content, {}, false, id);
    this.session.decryptionFaults.undecryptable({ messageId: id, chatId: sender.jid, sender, kind }, recovered ? resend : undefined);
    return id;
  }

  /** A burst of text messages from virtual contacts, delivered in slices so the daemon keeps answering. */
  async receiveBurst(count: number, contacts: number): Promise<void> {
    // about 10 ms of the daemon's time a slice (storing a message, its event and its deliveries): health answers between them
    const slice = 50;
    for (let sent = 0; sent < count; sent += slice) {
      for (let i = sent; i < Math.min(count, sent + slice); i += 1) {
        const from = virtualContact(i % contacts);
        this.session.deliver('message.received', {
          messageId: newMessageId(),
          chatId: `${from}@s.whatsapp.net`,
          from: this.ref(from),
          fromMe: false,
          isGroup: false,
          timestamp: now(),
          type: 'text',
          text: `burst message ${i + 1}`,
        });
      }
      await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * A history sync as the phone sends it after linking: `count` messages across `chats` chats, in chunks of
   * 5,000 (one history.sync event each, with its progress), as the real network sends them. `media` messages from the
   * first virtual contact end the last chunk; the phone keeps their bytes until they are downloaded.
   */
  async syncHistory(count: number, chats: number, media: OutgoingContent[] = []): Promise<void> {
    const chunk = 5000;
    const start = Date.now() - count * 1000;
    // a chunk is built a slice at a time with a turn of the event loop between: the simulated phone's work must not
    // hold up the daemon it runs in; each chat's ids are worked out once
    const slice = 1000;
    const chatRefs = new Map<number, { chatId: string; ref: JidRef }>();
    const chatOf = (index: number) => {
      let chat = chatRefs.get(index);
      if (!chat) {
        const contact = virtualContact(index);
        chat = { chatId: `${contact}@s.whatsapp.net`, ref: this.ref(contact) };
        chatRefs.set(index, chat);
      }
      return chat;
    };
    const own = this.ref(this.digits);
    for (let first = 0; first < count || first === 0; first += chunk) {
      const size = Math.min(chunk, count - first);
      const last = first + chunk >= count;
      const messages: Array<Record<string, unknown>> = [];
      for (let at = 0; at < size; at += slice) {
        if (at > 0) await new Promise((r) => setImmediate(r));
        for (let k = at; k < Math.min(size, at + slice); k += 1) {
          const i = first + k;
          const chat = chatOf(i % chats);
          const fromMe = i % 3 === 0;
          messages.push({
            messageId: newMessageId(),
            chatId: chat.chatId,
            from: fromMe ? own : chat.ref,
            fromMe,
            isGroup: false,
            timestamp: new Date(start + i * 1000).toISOString(),
            type: 'text',
            text: `history message ${i + 1}`,
            ...(fromMe ? { status: 'read' } : {}),
          });
        }
      }
      if (last) messages.push(...media.map((content) => this.historyMedia(content)));
      const progress = count === 0 ? 100 : Math.round(((first + size) / count) * 100);
      this.session.deliver('history.sync', { syncType: 'FULL', chunk: first / chunk + 1, progress, messages });
      await new Promise((r) => setImmediate(r));
      if (count === 0) break;
    }
  }

  /** The phone holds these older messages of `chatId` (the sandbox's older-history route). */
  holdOlder(chatId: string, messages: OlderMessage[]): void {
    this.network.holdOlder(this.digits, chatId, messages);
  }

  /**
   * A history request (POST …/chats/{chatId}/history): the phone answers, a moment later, with the newest `count` messages
   * of the chat it holds from before the anchor (seeded by the sandbox's older-history route), oldest first, as one
   * ON_DEMAND history.sync carrying the request id; with none, an empty one (messageCount 0).
   */
  requestHistory(anchor: HistoryAnchor, count: number): { requestId: string } {
    const requestId = newMessageId();
    const older = this.network.olderThan(this.digits, anchor.chatId, anchor.timestamp, count);
    const isGroup = jidKind(anchor.chatId) === 'group';
    const own = this.ref(this.digits);
    const other = isGroup ? undefined : jidKind(anchor.chatId) === 'user' ? this.ref(jidUser(anchor.chatId)) : undefined;
    const messages = older.map((m) => ({
      messageId: m.id,
      chatId: anchor.chatId,
      from: m.fromMe ? own : m.authorDigits ? this.ref(m.authorDigits) : (other ?? own),
      fromMe: m.fromMe,
      isGroup,
      timestamp: new Date(m.timestamp).toISOString(),
      type: 'text',
      text: m.text,
      ...(m.fromMe ? { status: 'read' } : {}),
    }));
    setTimeout(() => this.session.deliver('history.sync', { syncType: 'ON_DEMAND', requestId, chatId: anchor.chatId, chunk: 1, progress: 100, messages }), 10).unref();
    return { requestId };
  }

  /** A media message of the history: its bytes stay with the phone (the network), the event carries a reference. */
  private historyMedia(content: OutgoingContent): Record<string, unknown> {
    const { media, ...fields } = contentFields(content);
    const messageId = newMessageId();
    if (media?.data) this.network.holdMedia(messageId, media.data);
    const contact = virtualContact(0);
    return {
      messageId,
      chatId: `${contact}@s.whatsapp.net`,
      from: this.ref(contact),
      fromMe: false,
      isGroup: false,
      timestamp: now(),
      ...fields,
      ...(media ? { mimeType: media.mimeType, size: media.size, media: { mimeType: media.mimeType, size: media.size, ...(media.filename ? { filename: media.filename } : {}), ref: { phoneMedia: messageId } } } : {}),
    };
  }

  contactAction(fromDigits: string, action: ContactAction): void {
    const trace = this.network.trace(action.messageId);
    if (!trace || !this.conversationOf(trace).includes(fromDigits) || !this.conversationOf(trace).includes(this.digits)) {
      throw new GatewayError('MESSAGE_NOT_FOUND', `message ${action.messageId} is not in a conversation between this session and ${fromDigits}`);
    }
    const chatId = trace.groupId ?? (trace.senderDigits === this.digits ? trace.chatId : `${fromDigits}@s.whatsapp.net`);
    const from = this.ref(fromDigits);
    switch (action.kind) {
      case 'reaction':
        this.session.deliver('message.reaction', { messageId: trace.id, chatId, from, fromMe: false, reaction: action.reaction, timestamp: now() });
        return;
      case 'read':
        if (trace.senderDigits !== this.digits) throw new GatewayError('NOT_MESSAGE_OWNER', 'only messages the session sent can be read by the contact');
        this.ack(trace, 'read', fromDigits);
        return;
      case 'edit':
      case 'revoke':
        if (trace.senderDigits !== fromDigits) throw new GatewayError('NOT_MESSAGE_OWNER', `the contact can only ${action.kind} its own messages`);
        if (action.kind === 'edit') this.session.deliver('message.edited', { messageId: trace.id, chatId, from, fromMe: false, text: action.text, timestamp: now() });
        else this.session.deliver('message.revoked', { messageId: trace.id, chatId, from, fromMe: false, timestamp: now() });
        return;
      case 'vote': {
        if (!trace.poll) throw new GatewayError('VALIDATION_FAILED', `message ${trace.id} is not a poll`, [{ path: '/messageId', message: 'is not a poll' }]);
        const unknown = action.options.filter((o) => !trace.poll!.options.includes(o));
        if (unknown.length) throw new GatewayError('VALIDATION_FAILED', `not options of the poll: ${unknown.join(', ')}`, [{ path: '/options', message: 'contains options the poll does not have' }]);
        if (!trace.poll.multiSelect && action.options.length > 1) throw new GatewayError('VALIDATION_FAILED', 'the poll allows one option only', [{ path: '/options', message: 'at most one option' }]);
        this.session.deliver('message.vote', { pollMessageId: trace.id, chatId, voter: from, selectedOptions: action.options, timestamp: now() });
        return;
      }
    }
  }

  // ---- internals ----

  private resolve(chatId: string): Target {
    switch (jidKind(chatId)) {
      case 'user': {
        const digits = jidUser(chatId);
        return { kind: 'user', digits, byLid: false, registered: isRegisteredNumber(digits) };
      }
      case 'lid': {
        const digits = this.network.digitsOfLid(chatId) ?? this.session.digitsOfLearntLid(chatId);
        if (!digits) return { kind: 'user', digits: jidUser(chatId), byLid: true, registered: false };
        return { kind: 'user', digits, byLid: true, registered: isRegisteredNumber(digits) };
      }
      case 'group':
        this.requireGroup(chatId);
        return { kind: 'group', groupId: chatId };
      case 'newsletter': {
        // only the owner posts to a channel; its followers receive the post
        const channel = this.network.channels.get(chatId);
        if (!channel) throw new GatewayError('CHANNEL_NOT_FOUND', `channel ${chatId} not found`);
        if (channel.ownerDigits !== this.digits) throw new GatewayError('NOT_CHANNEL_OWNER', `only the owner of ${chatId} can post to it`);
        return { kind: 'channel', channelId: chatId };
      }
      case 'status':
        return { kind: 'status' };
      default:
        throw new GatewayError('VALIDATION_FAILED', `cannot send to ${chatId}`, [{ path: '/chatId', message: 'is not a chat the network can deliver to' }]);
    }
  }

  private requireGroup(groupId: string) {
    const group = this.network.groups.get(groupId);
    if (!group) throw new GatewayError('GROUP_NOT_FOUND', `group ${groupId} not found`);
    if (!group.members.has(this.digits)) throw new GatewayError('NOT_GROUP_MEMBER', `this session is not a member of ${groupId}`);
    return group;
  }

  private recipientsOf(target: Target): string[] {
    if (target.kind === 'user') return target.digits === this.digits ? [] : [target.digits];
    if (target.kind === 'group') return [...this.network.groups.get(target.groupId)!.members.keys()].filter((d) => d !== this.digits);
    if (target.kind === 'channel') return [...(this.network.channels.get(target.channelId)?.followers ?? [])].filter((d) => d !== this.digits);
    return [];
  }

  /** The phone digits of a status post's viewers (phone JIDs or LIDs the network knows), without this account. */
  private viewersOf(jids: string[]): string[] {
    const digits = jids.map((jid) => (jidKind(jid) === 'lid' ? this.network.digitsOfLid(jid) : jidUser(jid))).filter((d): d is string => !!d && d !== this.digits);
    return [...new Set(digits)];
  }

  /** Everyone in the conversation a message belongs to. */
  private conversationOf(trace: MessageTrace): string[] {
    if (trace.groupId) return [...(this.network.groups.get(trace.groupId)?.members.keys() ?? [])];
    return [trace.senderDigits, ...trace.recipients];
  }

  /** The chat id under which `digits` sees a message. */
  private chatFor(trace: MessageTrace, digits: string): string {
    if (trace.groupId) return trace.groupId;
    if (jidKind(trace.chatId) === 'status') return trace.chatId;
    if (digits === trace.senderDigits || isChannelTrace(trace)) return trace.chatId;
    return trace.addressedByLid ? this.network.lidOf(trace.senderDigits) : `${trace.senderDigits}@s.whatsapp.net`;
  }

  /** Who recipients see as the author of this account's message: the channel for channel posts. */
  private authorSeenBy(trace: MessageTrace): JidRef {
    return isChannelTrace(trace) ? jidRef(trace.chatId) : this.ref(this.digits);
  }

  private chatSeenBy(trace: MessageTrace): string {
    return this.chatFor(trace, trace.recipients[0] ?? '');
  }

  private ownTrace(target: MessageRef): MessageTrace {
    const trace = this.network.trace(target.id);
    if (!trace) throw new GatewayError('MESSAGE_NOT_FOUND', `message ${target.id} not found`);
    if (trace.senderDigits !== this.digits) throw new GatewayError('NOT_MESSAGE_OWNER', 'only messages this session sent can be changed');
    return trace;
  }

  private broadcast(trace: MessageTrace, type: 'message.edited' | 'message.revoked', payload: (chatId: string) => Record<string, unknown>): void {
    for (const digits of trace.groupId ? this.conversationOf(trace).filter((d) => d !== this.digits) : trace.recipients) {
      this.network.sessionFor(digits)?.deliver(type, payload(this.chatFor(trace, digits)));
    }
  }
}

export type ContactAction =
  | { kind: 'reaction'; messageId: string; reaction: string }
  | { kind: 'edit'; messageId: string; text: string }
  | { kind: 'revoke'; messageId: string }
  | { kind: 'read'; messageId: string }
  | { kind: 'vote'; messageId: string; options: string[] };

/** The phone digits of the n-th virtual contact of bursts and history syncs. */
function virtualContact(n: number): string {
  return `1555099${String(n).padStart(4, '0')}`;
}

function isChannelTrace(trace: MessageTrace): boolean {
  return jidKind(trace.chatId) === 'newsletter';
}

function now(): string {
  return isoTimestamp();
}
