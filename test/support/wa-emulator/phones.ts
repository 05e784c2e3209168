// What the virtual primary phones do: decrypt what companions send them (inbox), auto-ack delivery, and send as a contact.
import { EventEmitter } from 'node:events';
import { deflateSync } from 'node:zlib';
import { jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { Groups, Group } from './groups.js';
import { unixNow, type Hub } from './hub.js';
import { profile, type AddressingMode } from './profile.js';
import type { Account, Device } from './registry.js';
import { encNode } from './enc.js';
import { Retries } from './retries.js';

export interface PhoneMessage {
  id: string;
  /** the chat from the phone's side: the sender's PN user jid for 1:1, the group jid for groups */
  chat: string;
  /** sender's PN user jid */
  from: string;
  /** sender's PN device jid */
  fromDevice: string;
  /** a copy sent by a companion of the same account (deviceSentMessage, unwrapped) */
  ownDevice: boolean;
  message: proto.IMessage;
  /** conversation / extendedText / caption, when there is one */
  text?: string;
  at: number;
}

export interface PhoneReceipt {
  id: string;
  chat: string;
  /** the PN user jid that sent the receipt */
  from: string;
  /** undefined = delivered; 'read', 'played', … */
  type?: string;
  at: number;
}

export interface SendResult {
  id: string;
  /** PN device jids the stanza went to (sent or queued) */
  devices: string[];
}

export const STATUS_BROADCAST = 'status@broadcast';

/** Decryption faults of a phone's 1:1 send (control.sendUndecryptable). */
export interface SendFault {
  /** encrypted to a one-time pre-key the recipient's companions do not have: they cannot decrypt it */
  stalePreKey?: boolean;
  /** the phone never answers their retry receipts for it */
  ignoreRetries?: boolean;
}

export const messageText = (message: proto.IMessage | null | undefined): string | undefined =>
  message?.conversation ??
  message?.extendedTextMessage?.text ??
  message?.imageMessage?.caption ??
  message?.videoMessage?.caption ??
  message?.documentMessage?.caption ??
  undefined;

/** The stanza `type` Baileys would use for this content. */
export const stanzaType = (message: proto.IMessage): string => {
  if (message.reactionMessage || message.encReactionMessage) return 'reaction';
  if (message.pollCreationMessage || message.pollCreationMessageV3 || message.pollUpdateMessage) return 'poll';
  const media = ['imageMessage', 'videoMessage', 'audioMessage', 'documentMessage', 'stickerMessage', 'contactMessage', 'locationMessage'] as const;
  return media.some((key) => message[key]) ? 'media' : 'text';
};

export class Phones extends EventEmitter {
  private readonly inboxes = new Map<Account, PhoneMessage[]>();
  private readonly receiptLog = new Map<Account, PhoneReceipt[]>();
  /** decryption failures, for debugging tests */
  readonly failures: Array<{ phone: string; id: string; error: string }> = [];
  /** messages from another account decrypted into any inbox (own companions' copies not counted) */
  receivedCount = 0;
  /** phones that send delivery receipts for what they decrypt (all by default) */
  autoDeliveryReceipts = true;
  /** messages each phone holds from before what it synced, by chat (PN user jid or group jid), oldest first */
  private readonly older = new Map<Account, Map<string, proto.IWebMessageInfo[]>>();
  /** the on-demand history requests companions sent to each phone */
  readonly historyRequests: Array<{ phone: string; id: string; chatJid: string; count: number; oldestMsgId: string; oldestMsgTimestampMs: number; answered: number }> = [];

  /** retry receipts both ways between the phones and companions */
  readonly retries: Retries;

  constructor(
    private readonly hub: Hub,
    private readonly groups: Groups,
  ) {
    super();
    this.retries = new Retries(hub);
  }

  inbox(account: Account): PhoneMessage[] {
    return this.inboxes.get(account) ?? [];
  }

  receipts(account: Account): PhoneReceipt[] {
    return this.receiptLog.get(account) ?? [];
  }

  /** A 1:1 stanza a companion addressed to device 0 of `account`. */
  async receive(account: Account, sender: Device, enc: BinaryNode, stanza: BinaryNode, mode: AddressingMode): Promise<void> {
    const id = stanza.attrs.id ?? '';
    try {
      const type = enc.attrs.type === 'pkmsg' ? 'pkmsg' : 'msg';
      if (!(enc.content instanceof Uint8Array)) return;
      const decrypted = await account.primary.decrypt(sender.lid, type, enc.content);
      const ownDevice = sender.account === account;
      const message = decrypted.deviceSentMessage?.message ?? decrypted;
      if (message.senderKeyDistributionMessage) await account.primary.processSenderKey(sender.lid, message.senderKeyDistributionMessage);
      if (isOnlySenderKey(message)) return;
      if (!ownDevice && this.retries.askAgain(account, sender, id, mode)) return;
      const onDemand = ownDevice ? message.protocolMessage?.peerDataOperationRequestMessage : undefined;
      if (onDemand?.peerDataOperationRequestType === proto.Message.PeerDataOperationRequestType.HISTORY_SYNC_ON_DEMAND && onDemand.historySyncOnDemandRequest) {
        await this.answerHistoryRequest(account, id, onDemand.historySyncOnDemandRequest);
        return;
      }
      this.push(account, {
        id,
        chat: ownDevice ? (decrypted.deviceSentMessage?.destinationJid ?? account.pnJid) : sender.account.pnJid,
        from: sender.account.pnJid,
        fromDevice: sender.jid,
        ownDevice,
        message,
        at: Date.now(),
      });
      if (!ownDevice && this.autoDeliveryReceipts) this.sendReceipt(account, this.hub.registry.userJid(sender.account, mode), [id]);
    } catch (error) {
      this.fail(account, id, error);
    }
  }

  /** A group stanza fanned out to device 0 of `account`: the optional per-device enc (sender key) and the skmsg. */
  async receiveGroup(account: Account, sender: Device, group: Group, perDevice: BinaryNode | undefined, skmsg: BinaryNode | undefined, stanza: BinaryNode): Promise<void> {
    const id = stanza.attrs.id ?? '';
    try {
      const message = await this.decryptFanout(account, sender, group.jid, perDevice, skmsg);
      if (!message) return;
      this.push(account, { id, chat: group.jid, from: sender.account.pnJid, fromDevice: sender.jid, ownDevice: sender.account === account, message, at: Date.now() });
      if (sender.account !== account && this.autoDeliveryReceipts) this.sendReceipt(account, group.jid, [id], undefined, this.groups.jidOf(group, sender.account));
    } catch (error) {
      this.fail(account, id, error);
    }
  }

  /** A status post (status@broadcast) fanned out to device 0 of a viewer: sender keys as in groups; no receipt. */
  async receiveStatus(account: Account, sender: Device, perDevice: BinaryNode | undefined, skmsg: BinaryNode | undefined, stanza: BinaryNode): Promise<void> {
    const id = stanza.attrs.id ?? '';
    try {
      const message = await this.decryptFanout(account, sender, STATUS_BROADCAST, perDevice, skmsg);
      if (message) this.push(account, { id, chat: STATUS_BROADCAST, from: sender.account.pnJid, fromDevice: sender.jid, ownDevice: sender.account === account, message, at: Date.now() });
    } catch (error) {
      this.fail(account, id, error);
    }
  }

  private async decryptFanout(account: Account, sender: Device, groupJid: string, perDevice: BinaryNode | undefined, skmsg: BinaryNode | undefined): Promise<proto.IMessage | undefined> {
    if (perDevice?.content instanceof Uint8Array) {
      const first = await account.primary.decrypt(sender.lid, perDevice.attrs.type === 'pkmsg' ? 'pkmsg' : 'msg', perDevice.content);
      if (first.senderKeyDistributionMessage) await account.primary.processSenderKey(sender.lid, first.senderKeyDistributionMessage);
    }
    if (!(skmsg?.content instanceof Uint8Array)) return undefined;
    return account.primary.decryptGroup(groupJid, sender.lid, skmsg.content);
  }

  /** A receipt a companion sent for a message this phone's account sent. */
  recordReceipt(account: Account, receipt: PhoneReceipt): void {
    const list = this.receiptLog.get(account) ?? [];
    list.push(receipt);
    this.receiptLog.set(account, list);
    this.emit('receipt', account, receipt);
  }

  /** The phone of `from` sends `message` to a user (PN or LID jid) or a group. */
  /** `withoutAlt`: the stanza names the sender only in the addressing used (no `sender_pn`/`sender_lid`). */
  /** `fault` (1:1 only): the companions of `to` cannot decrypt it, and the phone may ignore their retry receipts. */
  async send(from: Account, to: string, message: proto.IMessage, id = this.hub.messageId(), withoutAlt = false, fault: SendFault = {}): Promise<SendResult> {
    if (jidDecode(to)?.server === 'g.us') {
      if (fault.stalePreKey || fault.ignoreRetries) throw new Error('decryption faults are for 1:1 messages');
      const group = this.groups.get(to);
      if (!group) throw new Error(`unknown group ${to}`);
      if (!group.participants.has(from)) throw new Error(`${from.phone} is not in ${to}`);
      return this.sendGroup(from, group, message, id);
    }
    const target = this.hub.registry.account(to);
    if (!target) throw new Error(`no account for ${to}`);
    const mode: AddressingMode = jidDecode(to)?.server === 'lid' ? 'lid' : 'pn';
    const chat = this.hub.registry.userJid(target, mode);
    const t = unixNow();
    const type = stanzaType(message);
    const devices: string[] = [];
    const sends: Array<{ device: Device; content: proto.IMessage; own: boolean }> = [
      ...this.hub.registry.companions(target).map((device) => ({ device, content: message, own: false })),
      ...(target === from ? [] : this.hub.registry.companions(from).map((device) => ({ device, content: { deviceSentMessage: { destinationJid: chat, message } }, own: true }))),
    ];
    const contactAttrs = { from: this.hub.registry.userJid(from, mode), id, type, t, notify: from.pushName, ...(withoutAlt ? {} : { [profile.senderAltAttr(mode)]: this.hub.registry.userJid(from, mode === 'lid' ? 'pn' : 'lid') }) };
    for (const { device, content, own } of sends) {
      const encrypted =
        fault.stalePreKey && !own
          ? await from.primary.encryptFresh(device.lid, content, this.hub.registry.staleBundle(device), false)
          : await from.primary.encrypt(device.lid, content, () => this.hub.registry.takeBundle(device));
      const attrs: Record<string, string> = own ? { from: this.hub.registry.userJid(from, mode), recipient: chat, id, type, t } : { ...contactAttrs };
      this.hub.deliver(device, { tag: 'message', attrs, content: [encNode(encrypted.type, encrypted.ciphertext, message)] });
      devices.push(device.jid);
    }
    this.retries.remember(id, { from, message, attrs: contactAttrs, ignoreRetries: fault.ignoreRetries === true });
    if (target !== from) {
      this.push(target, { id, chat: from.pnJid, from: from.pnJid, fromDevice: from.pnJid, ownDevice: false, message, at: Date.now() });
    }
    return { id, devices };
  }

  /** The phone of `from` sends a receipt (delivery by default) to the sender(s) of `ids` in `chat`. */
  sendReceipt(from: Account, chat: string, ids: string[], type?: string, participant?: string): void {
    if (!ids.length) return;
    const group = jidDecode(chat)?.server === 'g.us' ? this.groups.get(chat) : undefined;
    const authorJid = group ? participant : chat;
    const author = authorJid ? this.hub.registry.account(authorJid) : undefined;
    if (!author) return;
    const mode: AddressingMode = group ? group.addressingMode : jidDecode(chat)?.server === 'lid' ? 'lid' : 'pn';
    const attrs: Record<string, string> = group
      ? { from: group.jid, participant: this.hub.registry.userJid(from, mode), id: ids[0]!, t: unixNow() }
      : { from: this.hub.registry.userJid(from, mode), id: ids[0]!, t: unixNow() };
    if (type) attrs.type = type;
    const rest = ids.slice(1);
    const content: BinaryNode[] | undefined = rest.length ? [{ tag: 'list', attrs: {}, content: rest.map((item) => ({ tag: 'item', attrs: { id: item } })) }] : undefined;
    for (const device of this.hub.registry.companions(author)) {
      this.hub.deliver(device, { tag: 'receipt', attrs: { ...attrs }, ...(content ? { content } : {}) });
    }
    if (this.hub.registry.companions(author).length === 0) {
      for (const id of ids) this.recordReceipt(author, { id, chat, from: from.pnJid, ...(type ? { type } : {}), at: Date.now() });
    }
  }

  /**
   * The phone's messages to a newly linked companion (profile.phoneBootstrap), sent once, live, right after its first
   * `ib offline`: the app-state key share, then an empty INITIAL_BOOTSTRAP history notification.
   */
  async bootstrap(device: Device): Promise<void> {
    if (device.bootstrapped || device.virtual) return;
    device.bootstrapped = true;
    const account = device.account;
    const messages: proto.IMessage[] = [];
    if (profile.phoneBootstrap.appStateKeyShare) {
      const key = account.appStateKey;
      messages.push({
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
          appStateSyncKeyShare: {
            keys: [{ keyId: { keyId: key.keyId }, keyData: { keyData: key.keyData, fingerprint: { rawId: 1, currentIndex: 0, deviceIndexes: [0] }, timestamp: key.timestamp } }],
          },
        },
      });
    }
    if (profile.phoneBootstrap.historySync) {
      const history = proto.HistorySync.encode({
        syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
        conversations: [],
        pushnames: [{ id: account.pnJid, pushname: account.pushName }],
        progress: 100,
        chunkOrder: 0,
      }).finish();
      messages.push({
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: {
            syncType: proto.Message.HistorySyncType.INITIAL_BOOTSTRAP,
            initialHistBootstrapInlinePayload: deflateSync(history),
            fileLength: history.length,
            progress: 100,
            chunkOrder: 0,
          },
        },
      });
    }
    for (const message of messages) await this.toDevice(device, message);
  }

  /** A peer message from the phone to each of its account's companions. */
  private async toCompanions(account: Account, message: proto.IMessage): Promise<void> {
    for (const device of this.hub.registry.companions(account)) await this.toDevice(device, message);
  }

  private async toDevice(device: Device, message: proto.IMessage): Promise<void> {
    const account = device.account;
    const encrypted = await account.primary.encrypt(device.lid, message, () => this.hub.registry.takeBundle(device));
    this.hub.deliver(device, {
      tag: 'message',
      attrs: { from: account.pnJid, id: this.hub.messageId(), type: 'text', category: 'peer', t: unixNow() },
      content: [encNode(encrypted.type, encrypted.ciphertext)],
    });
  }

  /**
   * The phone syncs chat history to its companions (a RECENT history sync, payload inline): `messages` as the phone has
   * them (keys from the phone's side), grouped into conversations by chat.
   */
  async syncHistory(account: Account, messages: proto.IWebMessageInfo[], options: { chats?: proto.IConversation[]; onDemandRequestId?: string } = {}): Promise<void> {
    const chats = options.chats ?? [];
    const byChat = new Map<string, proto.IHistorySyncMsg[]>();
    for (const message of messages) {
      const chat = message.key?.remoteJid ?? '';
      byChat.set(chat, [...(byChat.get(chat) ?? []), { message }]);
    }
    // a conversation's state (name, archived, pinned, muted, unread) with the messages of its chat
    for (const chat of chats) if (chat.id && !byChat.has(chat.id)) byChat.set(chat.id, []);
    const stateOf = new Map(chats.map((c) => [c.id ?? '', c]));
    // an answer to a history request is an ON_DEMAND sync naming the request (its message id), as the real phone's
    const onDemand = options.onDemandRequestId !== undefined;
    const syncType = onDemand ? proto.HistorySync.HistorySyncType.ON_DEMAND : proto.HistorySync.HistorySyncType.RECENT;
    const history = proto.HistorySync.encode({
      syncType,
      conversations: [...byChat].map(([id, msgs]) => ({ ...stateOf.get(id), id, messages: msgs })),
      progress: 100,
      chunkOrder: 1,
    }).finish();
    const notification: proto.IMessage = {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
        historySyncNotification: {
          syncType: onDemand ? proto.Message.HistorySyncType.ON_DEMAND : proto.Message.HistorySyncType.RECENT,
          initialHistBootstrapInlinePayload: deflateSync(history),
          fileLength: history.length,
          progress: 100,
          chunkOrder: 1,
          ...(onDemand ? { peerDataRequestSessionId: options.onDemandRequestId } : {}),
        },
      },
    };
    await this.toCompanions(account, notification);
  }

  /**
   * The phone of `account` holds `messages` of `chat` (keys from the phone's side) from before what it synced: a history
   * request of a companion gets those older than its anchor.
   */
  seedOlder(account: Account, chat: string, messages: proto.IWebMessageInfo[]): void {
    const chats = this.older.get(account) ?? new Map<string, proto.IWebMessageInfo[]>();
    this.older.set(account, chats);
    const held = [...(chats.get(chat) ?? []), ...messages];
    held.sort((a, b) => Number(a.messageTimestamp ?? 0) - Number(b.messageTimestamp ?? 0));
    chats.set(chat, held);
  }

  /**
   * A companion asked for older messages of a chat (peerDataOperationRequestMessage, HISTORY_SYNC_ON_DEMAND): the phone
   * answers with the newest `onDemandMsgCount` it holds from before the anchor, oldest first, in an ON_DEMAND history
   * sync naming the request; with none, an empty one.
   */
  private async answerHistoryRequest(account: Account, requestId: string, request: proto.Message.PeerDataOperationRequestMessage.IHistorySyncOnDemandRequest): Promise<void> {
    const chatJid = request.chatJid ?? '';
    const chat = jidDecode(chatJid)?.server === 'g.us' ? chatJid : (this.hub.registry.account(chatJid)?.pnJid ?? chatJid);
    const before = Number(request.oldestMsgTimestampMs ?? 0);
    const count = Math.max(0, Math.min(Number(request.onDemandMsgCount ?? 0), 50));
    const earlier = (this.older.get(account)?.get(chat) ?? []).filter((m) => Number(m.messageTimestamp ?? 0) * 1000 < before);
    const answer = count > 0 ? earlier.slice(-count) : [];
    this.historyRequests.push({ phone: account.phone, id: requestId, chatJid, count, oldestMsgId: request.oldestMsgId ?? '', oldestMsgTimestampMs: before, answered: answer.length });
    this.emit('historyRequest', account, requestId);
    await this.syncHistory(account, answer, { onDemandRequestId: requestId });
  }

  /** Resolves with the first inbox message of `account` (already there or arriving) that matches. */
  waitForMessage(account: Account, match: (m: PhoneMessage) => boolean, timeoutMs = 5_000): Promise<PhoneMessage> {
    const found = this.inbox(account).find(match);
    if (found) return Promise.resolve(found);
    return new Promise<PhoneMessage>((resolve, reject) => {
      const onMessage = (to: Account, m: PhoneMessage) => {
        if (to !== account || !match(m)) return;
        clearTimeout(timer);
        this.off('message', onMessage);
        resolve(m);
      };
      const timer = setTimeout(() => {
        this.off('message', onMessage);
        reject(new Error(`phone ${account.phone} received no matching message within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on('message', onMessage);
    });
  }

  private async sendGroup(from: Account, group: Group, message: proto.IMessage, id: string): Promise<SendResult> {
    const mode = group.addressingMode;
    const meId = this.hub.registry.userJid(from, mode);
    const { ciphertext, senderKeyDistributionMessage } = await from.primary.encryptGroup(group.jid, meId, message);
    const skdm: proto.IMessage = { senderKeyDistributionMessage: { groupId: group.jid, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } };
    const t = unixNow();
    const type = stanzaType(message);
    const devices: string[] = [];
    for (const member of this.groups.members(group)) {
      for (const device of this.hub.registry.companions(member)) {
        const encrypted = await from.primary.encrypt(device.lid, skdm, () => this.hub.registry.takeBundle(device));
        this.hub.deliver(device, {
          tag: 'message',
          attrs: {
            from: group.jid,
            participant: meId,
            [profile.participantAltAttr(mode)]: this.hub.registry.userJid(from, mode === 'lid' ? 'pn' : 'lid'),
            addressing_mode: mode,
            id,
            type,
            t,
            notify: from.pushName,
          },
          content: [encNode(encrypted.type, encrypted.ciphertext), encNode('skmsg', ciphertext, message)],
        });
        devices.push(device.jid);
      }
      if (member !== from && this.hub.registry.companions(member).length === 0) {
        this.push(member, { id, chat: group.jid, from: from.pnJid, fromDevice: from.pnJid, ownDevice: false, message, at: Date.now() });
      }
    }
    return { id, devices };
  }

  private push(account: Account, message: PhoneMessage): void {
    const text = messageText(message.message);
    const full = text === undefined ? message : { ...message, text };
    const list = this.inboxes.get(account) ?? [];
    list.push(full);
    this.inboxes.set(account, list);
    if (!full.ownDevice) this.receivedCount += 1;
    this.emit('message', account, full);
  }

  private fail(account: Account, id: string, error: unknown): void {
    const text = error instanceof Error ? error.message : String(error);
    this.failures.push({ phone: account.phone, id, error: text });
    this.hub.log('virtual phone could not decrypt', { phone: account.phone, id, error: text });
  }
}

const isOnlySenderKey = (message: proto.IMessage): boolean =>
  !!message.senderKeyDistributionMessage && Object.entries(message).filter(([key, value]) => value != null && key !== 'senderKeyDistributionMessage' && key !== 'messageContextInfo').length === 0;

