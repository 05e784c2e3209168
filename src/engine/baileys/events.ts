// Baileys events → the gateway's normalised events (BAILEYS.md §11.1; docs/ENGINES.md has the table).
import {
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  normalizeMessageContent,
  proto,
  toNumber,
  WAMessageStubType,
  type BaileysEventMap,
  type Chat,
  type Contact,
  type GroupMetadata,
  type GroupParticipant,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import type { EventType } from '../../events/catalogue.js';
import { ContactUpdates } from '../contact-updates.js';
import { jidRef, type JidRef } from '../jid.js';
import type { MessagePayload } from '../payloads.js';
import { MAX_ON_DEMAND_BATCH, type DeliveryStatus, type SyncedChat } from '../types.js';
import { contentOf, isoOf, textOf, toRaw } from './content.js';
import type { SessionContext } from './context.js';
import { BaileysCalls } from './calls.js';
import { applyParticipantChange, groupChanges } from './groups.js';
import type { PollVotes } from './polls.js';

/** how long a receipt waits for the send of its message to be recorded (events.ts handle) */
const SEND_RECORD_WAIT_MS = 2000;

type Events = Partial<BaileysEventMap>;

const STATUS: Partial<Record<number, DeliveryStatus>> = {
  [proto.WebMessageInfo.Status.SERVER_ACK]: 'sent',
  [proto.WebMessageInfo.Status.DELIVERY_ACK]: 'delivered',
  [proto.WebMessageInfo.Status.READ]: 'read',
  [proto.WebMessageInfo.Status.PLAYED]: 'read',
};

const now = (): string => new Date().toISOString();

/** Seconds (history syncs give pins in seconds) or ms (app-state actions) → ms. */
const msOf = (value: number): number => (value > 0 && value < 100_000_000_000 ? value * 1000 : value);

/** past the last time a Date can hold (ms) */
const MAX_TIME = 8_640_000_000_000_000;

/**
 * A chat's mute end as Baileys reports it: null or 0 when unmuted (an unmute action carries no end), -1 when muted for
 * good (a history sync's unsigned field holds it as 2^64 - 1), else the end in ms; an end already past reads as unmuted.
 */
export function muteOf(value: Parameters<typeof toNumber>[0]): { muted: boolean; muteEndTime: string | null } {
  const end = value == null ? 0 : toNumber(value);
  if (end < 0 || !Number.isFinite(end) || msOf(end) > MAX_TIME) return { muted: true, muteEndTime: null };
  if (end > 0 && msOf(end) > Date.now()) return { muted: true, muteEndTime: new Date(msOf(end)).toISOString() };
  return { muted: false, muteEndTime: null };
}

export class EventMapper {
  /** group ids this session asked to join, so their arrival reads "joined" */
  readonly pendingJoins = new Set<string>();
  private readonly contactUpdates = new ContactUpdates();

  constructor(
    private readonly ctx: SessionContext,
    private readonly polls: PollVotes,
    readonly calls = new BaileysCalls(ctx),
  ) {}

  private emit(type: EventType, payload: object): void {
    if (type === 'contact.update' && !this.contactUpdates.changes(payload as Record<string, unknown>)) return;
    this.ctx.hooks.event(type, payload as Record<string, unknown>);
  }

  /** One consolidated batch from `sock.ev.process`; its events go out in order (a vote may wait on its poll's lookup). */
  async handle(events: Events): Promise<void> {
    if (events['lid-mapping.update']) this.ctx.ids.remember(events['lid-mapping.update'].pn, events['lid-mapping.update'].lid, 'network');
    if (events['messaging-history.set']) this.history(events['messaging-history.set']);
    if (events['contacts.upsert']) this.contacts(events['contacts.upsert']);
    if (events['contacts.update']) this.contacts(events['contacts.update']);
    if (events['lid-mapping.update']) {
      const { pn, lid } = events['lid-mapping.update'];
      this.emit('contact.update', this.contactIds(pn, lid));
    }
    if (events['groups.upsert']) this.groupsUpsert(events['groups.upsert']);
    if (events['groups.update']) this.groupsUpdate(events['groups.update']);
    if (events['group-participants.update']) this.participants(events['group-participants.update']);
    if (events['messages.upsert']) await this.upsert(events['messages.upsert']);
    // an ack of a message still being sent waits until its sender has recorded it, a while at most: what the send still
    // does after its frame left (a LID lookup) may itself wait on confirmations held behind this batch
    if (this.ctx.sendsInFlight.size > 0) {
      const ids = [...(events['messages.update'] ?? []).map((u) => u.key.id), ...(events['message-receipt.update'] ?? []).map((r) => r.key.id)];
      const sending = ids.flatMap((id) => (id ? (this.ctx.sendsInFlight.get(id) ?? []) : []));
      if (sending.length > 0) await Promise.race([Promise.all(sending), new Promise((resolve) => setTimeout(resolve, SEND_RECORD_WAIT_MS))]);
    }
    if (events['messages.update']) this.updates(events['messages.update']);
    if (events['message-receipt.update']) this.receipts(events['message-receipt.update']);
    if (events['messages.reaction']) this.reactions(events['messages.reaction']);
    if (events['messages.delete'] && 'keys' in events['messages.delete']) {
      for (const key of events['messages.delete'].keys) this.emit('message.delete', { messageId: key.id, chatId: this.chatOf(key), timestamp: now() });
    }
    if (events['presence.update']) this.presence(events['presence.update']);
    if (events['chats.update']) this.chats(events['chats.update']);
    if (events['chats.delete']) for (const chatId of events['chats.delete']) this.emit('chat.delete', { chatId: this.canonicalChat(chatId), timestamp: now() });
    if (events['blocklist.update']) {
      const { blocklist, type } = events['blocklist.update'];
      this.emit('blocklist.update', { action: type === 'add' ? 'blocked' : 'unblocked', jids: blocklist.map((j) => this.ctx.ids.canonical(j) ?? j) });
    }
    if (events['labels.edit']) {
      const label = events['labels.edit'];
      this.emit('labels.update', { action: label.deleted ? 'deleted' : 'saved', label: { id: label.id, name: label.name, color: label.color } });
    }
    if (events['labels.association']) {
      const { type, association } = events['labels.association'];
      if ('chatId' in association && !('messageId' in association)) {
        this.emit('labels.update', { action: type === 'add' ? 'assigned' : 'unassigned', labelId: association.labelId, chatId: this.canonicalChat(association.chatId) });
      }
    }
    if (events.call) this.callUpdates(events.call);
    if (events['newsletter.reaction']) this.emit('newsletter.update', { id: events['newsletter.reaction'].id, action: 'reaction', serverId: events['newsletter.reaction'].server_id, reaction: events['newsletter.reaction'].reaction });
    if (events['newsletter.view']) this.emit('newsletter.update', { id: events['newsletter.view'].id, action: 'view', serverId: events['newsletter.view'].server_id, count: events['newsletter.view'].count });
    if (events['newsletter-participants.update']) {
      const u = events['newsletter-participants.update'];
      this.emit('newsletter.update', { id: u.id, action: 'participant', user: u.user, role: u.new_role, change: u.action });
    }
    if (events['newsletter-settings.update']) this.emit('newsletter.update', { id: events['newsletter-settings.update'].id, action: 'settings', update: events['newsletter-settings.update'].update });
  }

  // ---- messages ----

  /** 'append' (offline catch-up) is delivered like 'notify'. */
  private async upsert({ messages }: BaileysEventMap['messages.upsert']): Promise<void> {
    for (const msg of messages) {
      const id = msg.key.id;
      if (!id || !msg.key.remoteJid) continue;
      this.learnKey(msg.key);
      if (msg.key.fromMe && this.ctx.ownSends.get(id) !== undefined) {
        // the echo of an API send (emitOwnEvents): message.sent went out already; only a receipt folded into it is news
        const status = STATUS[msg.status ?? -1];
        if (status && status !== 'sent') this.ack(msg.key, status);
        continue;
      }
      if (msg.messageStubType) continue; // group changes arrive as group events; CIPHERTEXT placeholders carry nothing yet
      if (normalizeMessageContent(msg.message)?.pollUpdateMessage) {
        await this.vote(msg);
        continue;
      }
      const payload = this.messagePayload(msg);
      if (!payload) continue;
      if (payload.type === 'poll') this.polls.rememberPoll(msg);
      this.emit('message.received', payload);
    }
  }

  /** The normalised payload of a message, or undefined when it is not one the gateway models. */
  messagePayload(msg: WAMessage): MessagePayload | undefined {
    const fields = contentOf(msg);
    if (!fields) return undefined;
    const key = msg.key;
    const isGroup = !!isJidGroup(key.remoteJid ?? undefined);
    const from = key.fromMe ? this.own() : this.authorOf(key);
    return {
      messageId: key.id!,
      chatId: this.chatOf(key),
      from,
      fromMe: !!key.fromMe,
      isGroup,
      timestamp: isoOf(msg.messageTimestamp),
      ...fields,
      ...(key.fromMe ? { status: STATUS[msg.status ?? -1] ?? 'sent' } : {}),
      raw: toRaw(msg),
    } as MessagePayload;
  }

  private async vote(msg: WAMessage): Promise<void> {
    const vote = await this.polls.decrypt(msg);
    if (!vote) return;
    this.emit('message.vote', {
      pollMessageId: vote.pollMessageId,
      chatId: this.chatOf(msg.key),
      voter: msg.key.fromMe ? this.own() : this.authorOf(msg.key),
      selectedOptions: vote.selectedOptions,
      timestamp: isoOf(msg.messageTimestamp),
    });
  }

  private updates(updates: BaileysEventMap['messages.update']): void {
    for (const { key, update } of updates) {
      if (!key.id) continue;
      if (update.messageStubType === WAMessageStubType.REVOKE && update.message === null) {
        const revoker = (update.key ?? key) as WAMessageKey;
        if (revoker.fromMe && revoker.id && this.ctx.ownSends.get(revoker.id) !== undefined) continue;
        this.emit('message.revoked', { messageId: key.id, chatId: this.chatOf(key), from: revoker.fromMe ? this.own() : this.authorOf(revoker), fromMe: !!revoker.fromMe, timestamp: now() });
        continue;
      }
      const edited = update.message?.editedMessage?.message;
      if (edited) {
        if (key.fromMe && this.ctx.ownSends.get(`edit:${key.id}`) !== undefined) continue;
        this.emit('message.edited', {
          messageId: key.id,
          chatId: this.chatOf(key),
          from: key.fromMe ? this.own() : this.authorOf(key),
          fromMe: !!key.fromMe,
          text: textOf(edited) ?? '',
          timestamp: isoOf(update.messageTimestamp),
        });
        continue;
      }
      if (typeof update.status === 'number' && key.fromMe) {
        const status = STATUS[update.status];
        // a refusal (Status.ERROR) is reported by the server-ack tracker, which saw the ack itself (session.ts)
        if (status) this.ack(key, status);
      }
      if (typeof update.starred === 'boolean') this.emit('message.update', { messageId: key.id, chatId: this.chatOf(key), starred: update.starred, timestamp: now() });
    }
  }

  private receipts(updates: BaileysEventMap['message-receipt.update']): void {
    for (const { key, receipt } of updates) {
      if (!key.id || !key.fromMe) continue;
      const status: DeliveryStatus | undefined = receipt.readTimestamp || receipt.playedTimestamp ? 'read' : receipt.receiptTimestamp ? 'delivered' : undefined;
      if (status) this.ack(key, status, receipt.userJid ?? undefined);
    }
  }

  private ack(key: WAMessageKey, status: DeliveryStatus, by?: string): void {
    // acks name the chat the way the message was addressed when the gateway sent it
    const chatId = this.ctx.ownSends.get<string>(key.id!) ?? this.chatOf(key);
    const byRef = by ? this.ctx.ids.ref(by) : !isJidGroup(key.remoteJid ?? undefined) ? this.ctx.ids.ref(key.remoteJid, key.remoteJidAlt) : undefined;
    this.emit('message.ack', { messageId: key.id, chatId, status, ...(byRef ? { by: byRef } : {}), timestamp: now() });
  }

  private reactions(reactions: BaileysEventMap['messages.reaction']): void {
    for (const { key, reaction } of reactions) {
      const reactor = reaction.key;
      if (!key.id || !reactor) continue;
      if (reactor.fromMe && reactor.id && this.ctx.ownSends.get(reactor.id) !== undefined) continue;
      this.emit('message.reaction', {
        messageId: key.id,
        chatId: this.chatOf(key),
        from: reactor.fromMe ? this.own() : this.authorOf(reactor),
        fromMe: !!reactor.fromMe,
        reaction: reaction.text ?? '',
        timestamp: reaction.senderTimestampMs ? new Date(toNumber(reaction.senderTimestampMs)).toISOString() : now(),
      });
    }
  }

  private history(set: BaileysEventMap['messaging-history.set']): void {
    for (const { lid, pn } of set.lidPnMappings ?? []) this.ctx.ids.remember(pn, lid, 'history');
    if (set.contacts.length) this.contacts(set.contacts);
    const onDemand = set.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND;
    let synced = set.messages;
    if (onDemand && synced.length > MAX_ON_DEMAND_BATCH) {
      // an answer to a request for at most 50: a phone (or anything posing as one) sending more is cut, not stored whole
      this.ctx.logger.warn({ messages: synced.length, kept: MAX_ON_DEMAND_BATCH }, 'an on-demand history batch larger than any request was cut');
      synced = synced.slice(0, MAX_ON_DEMAND_BATCH);
    }
    const messages: MessagePayload[] = [];
    for (const msg of synced) {
      if (!msg.key.id || !msg.key.remoteJid || msg.messageStubType || isJidStatusBroadcast(msg.key.remoteJid)) continue;
      this.learnKey(msg.key);
      const payload = this.messagePayload(msg);
      if (!payload) continue;
      if (payload.type === 'poll') this.polls.rememberPoll(msg);
      // media keeps its reference: the ingest records it, and nothing is fetched until someone downloads it
      messages.push(payload);
    }
    const syncType = set.syncType == null ? 'UNKNOWN' : (proto.HistorySync.HistorySyncType[set.syncType] ?? String(set.syncType));
    const chats = set.chats.map((chat) => this.syncedChat(chat)).filter((c) => c !== undefined);
    const request = onDemand ? this.historyRequestOf(set.peerDataRequestSessionId ?? undefined, messages) : undefined;
    this.emit('history.sync', {
      syncType,
      ...(request ?? {}),
      ...(set.chunkOrder != null ? { chunk: set.chunkOrder } : {}),
      progress: set.progress ?? (set.isLatest ? 100 : null),
      messages,
      // stored into the chat list, then left out of the event (chatCount counts them)
      chats,
    });
  }

  /** A conversation of a history sync as the chat list keeps it (status broadcasts and channels are not chats of it). */
  syncedChat(chat: Chat): SyncedChat | undefined {
    if (!chat.id || isJidStatusBroadcast(chat.id) || isJidNewsletter(chat.id)) return undefined;
    const pinned = chat.pinned == null ? undefined : toNumber(chat.pinned);
    const mute = chat.muteEndTime === undefined ? undefined : muteOf(chat.muteEndTime);
    const lastAt = chat.conversationTimestamp == null ? undefined : msOf(toNumber(chat.conversationTimestamp));
    return {
      chatId: this.canonicalChat(chat.id),
      ...(chat.name ? { name: chat.name } : {}),
      ...(typeof chat.archived === 'boolean' ? { archived: chat.archived } : {}),
      ...(pinned !== undefined ? { pinnedAt: pinned > 0 ? msOf(pinned) : null } : {}),
      ...(mute ? { muteUntil: mute.muted ? (mute.muteEndTime ? Date.parse(mute.muteEndTime) : -1) : null } : {}),
      ...(chat.unreadCount != null ? { unreadCount: Math.max(0, chat.unreadCount) } : {}),
      ...(typeof chat.markedAsUnread === 'boolean' ? { markedUnread: chat.markedAsUnread } : {}),
      ...(lastAt ? { lastAt } : {}),
    };
  }

  /**
   * The request an ON_DEMAND batch answers: the one the phone names (peerDataRequestSessionId, the request's message
   * id), else the one pending for the chat of its messages.
   */
  private historyRequestOf(sessionId: string | undefined, messages: MessagePayload[]): { requestId: string; chatId: string } | undefined {
    const requests = this.ctx.historyRequests;
    const named = sessionId ? requests.get<string>(sessionId) : undefined;
    if (sessionId && named) return { requestId: sessionId, chatId: named };
    const chatId = messages[0]?.chatId;
    const pending = chatId ? requests.get<string>(`chat:${chatId}`) : undefined;
    return pending && chatId ? { requestId: pending, chatId } : undefined;
  }

  // ---- people, groups, chats ----

  private contacts(contacts: Array<Partial<Contact>>): void {
    for (const c of contacts) {
      if (!c.id || isJidGroup(c.id) || isJidNewsletter(c.id)) continue;
      this.ctx.ids.remember(c.id, c.lid ?? c.phoneNumber, 'contact');
      const ids = this.contactIds(c.id, c.lid ?? c.phoneNumber);
      this.emit('contact.update', {
        ...ids,
        ...(c.notify ? { name: c.notify } : {}),
        ...(c.name ? { savedName: c.name } : {}),
        ...(c.verifiedName ? { businessName: c.verifiedName } : {}),
        ...(c.imgUrl === null || c.imgUrl === 'removed' ? { pictureUrl: null } : typeof c.imgUrl === 'string' && c.imgUrl.startsWith('https://') ? { pictureUrl: c.imgUrl } : {}),
      });
    }
  }

  private contactIds(jid: string, alt?: string): { id: string; phoneNumber?: string; lid?: string } {
    const ref = this.ctx.ids.ref(jid, alt);
    return { id: ref.jid, ...(ref.phoneNumber ? { phoneNumber: ref.phoneNumber } : {}), ...(ref.lid ? { lid: ref.lid } : {}) };
  }

  private groupsUpsert(groups: GroupMetadata[]): void {
    for (const group of groups) {
      this.ctx.groups.set(group.id, group);
      this.learnParticipants(group.participants);
      const joined = this.pendingJoins.delete(group.id);
      this.emit('group.update', { id: group.id, action: joined ? 'joined' : 'created', newSubject: group.subject, ...(group.author ? { by: this.ctx.ids.ref(group.author, group.authorPn, 'group') } : {}) });
    }
  }

  private groupsUpdate(updates: Array<Partial<GroupMetadata>>): void {
    for (const update of updates) {
      if (!update.id) continue;
      const before = this.ctx.groups.get(update.id);
      if (update.participants) {
        // a full snapshot (groupFetchAllParticipating emits one per group): refresh the cache, report only real changes
        this.ctx.groups.set(update.id, update as GroupMetadata);
        if (!before) continue;
      } else if (before) {
        this.ctx.groups.set(update.id, { ...before, ...update });
      }
      const changes = groupChanges(before, update);
      if (!changes) continue;
      this.emit('group.update', { id: update.id, ...changes, ...(update.author ? { by: this.ctx.ids.ref(update.author, update.authorPn, 'group') } : {}) });
    }
  }

  private participants(update: BaileysEventMap['group-participants.update']): void {
    this.learnParticipants(update.participants);
    const jids = update.participants.map((p) => this.ctx.ids.canonical(p.phoneNumber ?? p.id, p.lid ?? p.id, 'group') ?? p.id);
    const author = update.author ? this.ctx.ids.canonical(update.author, update.authorPn, 'group') : undefined;
    const self = author !== undefined && jids.length === 1 && jids[0] === author;
    const action = update.action === 'add' && self ? 'join' : update.action === 'remove' && self ? 'leave' : update.action;
    const field = { add: 'joined', remove: 'left', promote: 'promoted', demote: 'demoted' }[update.action as 'add'];
    applyParticipantChange(this.ctx.groups, update, this.ctx.me());
    if (!field) return; // 'modify' (a member changed number) has no field of its own
    this.emit('group.participant', {
      id: update.id,
      action,
      joined: [],
      left: [],
      promoted: [],
      demoted: [],
      [field]: jids,
      participants: update.participants.map((p) => this.ctx.ids.ref(p.phoneNumber ?? p.id, p.lid ?? p.id, 'group')),
      ...(update.author ? { by: this.ctx.ids.ref(update.author, update.authorPn, 'group') } : {}),
    });
  }

  private presence({ id, presences }: BaileysEventMap['presence.update']): void {
    const group = isJidGroup(id);
    for (const [participant, data] of Object.entries(presences)) {
      const who = this.ctx.ids.ref(participant);
      const presence = data.lastKnownPresence;
      this.emit('presence.update', {
        from: group ? jidRef(id) : who,
        ...(group ? { sender: who } : {}),
        presence: presence === 'paused' ? 'available' : presence,
        state: presence === 'composing' || presence === 'recording' ? 'composing' : 'paused',
        unavailable: presence === 'unavailable',
        ...(typeof data.lastSeen === 'number' ? { lastSeen: data.lastSeen } : {}),
        ...(presence === 'recording' ? { media: 'audio' } : {}),
      });
    }
  }

  private chats(updates: BaileysEventMap['chats.update']): void {
    for (const update of updates) {
      if (!update.id) continue;
      const chatId = this.canonicalChat(update.id);
      const timestamp = update.timestamp ? new Date(update.timestamp * 1000).toISOString() : now();
      if (typeof update.archived === 'boolean') this.emit('chat.archive', { chatId, archived: update.archived, timestamp });
      // a pin's value is when it was pinned (ms); null (or 0) unpins
      if (update.pinned !== undefined) {
        const at = update.pinned == null ? 0 : toNumber(update.pinned);
        this.emit('chat.pin', { chatId, pinned: at > 0, timestamp: at > 0 ? new Date(msOf(at)).toISOString() : timestamp });
      }
      if (update.muteEndTime !== undefined) this.emit('chat.mute', { chatId, ...muteOf(update.muteEndTime), timestamp });
      // a positive unreadCount is a delta (a new message), not a state
      if (update.unreadCount === 0 || (update.unreadCount === -1 && !update.messages)) this.emit('chat.read', { chatId, read: update.unreadCount === 0, timestamp });
    }
  }

  private callUpdates(calls: BaileysEventMap['call']): void {
    for (const call of calls) this.calls.handle(call, (jid) => this.canonicalChat(jid));
  }

  // ---- ids ----

  /** The chat as the gateway names it: groups and channels as they are, 1:1 chats by phone JID when known. */
  chatOf(key: WAMessageKey): string {
    const remote = key.remoteJid ?? '';
    if (isJidGroup(remote) || isJidNewsletter(remote) || isJidStatusBroadcast(remote)) return remote;
    return this.ctx.ids.canonical(remote, key.remoteJidAlt) ?? remote;
  }

  private canonicalChat(jid: string): string {
    return isJidGroup(jid) || isJidNewsletter(jid) ? jid : (this.ctx.ids.canonical(jid) ?? jid);
  }

  /** Groups and status posts name their author in `participant`; 1:1 chats are the author. */
  authorOf(key: WAMessageKey): JidRef {
    const remote = key.remoteJid ?? '';
    return isJidGroup(remote) || isJidStatusBroadcast(remote) ? this.ctx.ids.ref(key.participant, key.participantAlt) : this.ctx.ids.ref(key.remoteJid, key.remoteJidAlt);
  }

  private own(): JidRef {
    const me = this.ctx.me();
    return this.ctx.ids.ref(me.pn ?? me.lid, me.lid);
  }

  private learnKey(key: WAMessageKey): void {
    this.ctx.ids.remember(key.remoteJid, key.remoteJidAlt);
    this.ctx.ids.remember(key.participant, key.participantAlt);
  }

  private learnParticipants(participants: GroupParticipant[]): void {
    for (const p of participants) this.ctx.ids.remember(p.phoneNumber ?? p.id, p.lid ?? p.id, 'group');
  }
}
