// The typed control API tests drive (the phone's side of things), and the same API as JSON over HTTP on loopback.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { CallAddressing, CallRecord, Calls } from './calls.js';
import type { Groups, GroupInfo } from './groups.js';
import type { MessageFault, MessageFaults } from './message-faults.js';
import type { Router } from './routing.js';
import type { Confirmation, Hub } from './hub.js';
import type { MediaStore, UploadedMedia } from './media-store.js';
import type { Pictures } from './pictures.js';
import type { AppState, AppStatePatchRecord } from './app-state.js';
import type { Pairing, PairingRestart } from './pairing.js';
import type { PhoneMessage, PhoneReceipt, Phones, SendResult } from './phones.js';
import type { RetryRecord } from './retries.js';
import type { ChatState, Presence } from './presence.js';
import { LOGOUT_REASONS, profile, type AddressingMode, type CloseCode, type CloseKind, type LogoutReason } from './profile.js';
import type { StanzaFilter, StanzaRecord } from './recorder.js';
import type { ConnectionStats, EmulatorStats } from './stats.js';
import { deviceInfo, normalisePhone, type Account, type AccountInfo, type AccountOptions, type DeviceInfo } from './registry.js';

export interface ControlDeps {
  hub: Hub;
  pairing: Pairing;
  groups: Groups;
  phones: Phones;
  presence: Presence;
  media: MediaStore;
  stats: ConnectionStats;
  pictures: Pictures;
  calls: Calls;
  appState: AppState;
  messageFaults: MessageFaults;
  router: Router;
}

export const CLOSE_CODES: readonly CloseCode[] = [401, 403, 408, 428, 440, 500, 503, 515];

export class EmulatorControl {
  constructor(private readonly deps: ControlDeps) {}

  private get registry() {
    return this.deps.hub.registry;
  }

  /** Creates a phone account (its primary phone is simulated). Throws if it exists. */
  createAccount(options: AccountOptions): AccountInfo {
    return this.registry.accountInfo(this.registry.createAccount(options));
  }

  account(phone: string): AccountInfo | undefined {
    const account = this.registry.account(phone);
    return account ? this.registry.accountInfo(account) : undefined;
  }

  accounts(): AccountInfo[] {
    return [...this.registry.accounts.values()].map((a) => this.registry.accountInfo(a));
  }

  /** Linked companions, of one phone or all. */
  devices(phone?: string): DeviceInfo[] {
    const all = [...this.registry.devices.values()].filter((d) => !d.virtual);
    return (phone ? all.filter((d) => d.account.phone === normalisePhone(phone)) : all).map(deviceInfo);
  }

  /** The phone of `phone` scans the QR string Baileys emitted (`connection.update.qr`); creates the account if needed. */
  async scanQr(qr: string, phone: string): Promise<DeviceInfo> {
    return deviceInfo(await this.deps.pairing.scanQr(qr, this.registry.ensureAccount(phone)));
  }

  /** The user types the code from `requestPairingCode(phone)` on that phone; creates the account if needed. */
  async enterPairingCode(phone: string, code: string, timeoutMs = 5_000, restart: PairingRestart = 'stream-error'): Promise<DeviceInfo> {
    return deviceInfo(await this.deps.pairing.enterPairingCode(this.registry.ensureAccount(phone), code, timeoutMs, restart));
  }

  /** The phone logs a companion out: it gets 401 (device_removed) now or at its next login. */
  unlink(deviceJid: string): DeviceInfo {
    const device = this.registry.device(deviceJid);
    if (!device || device.virtual) throw new Error(`no linked device ${deviceJid}`);
    this.deps.pairing.unlink(device);
    return deviceInfo(device);
  }

  /** Drops a companion's connection so Baileys reports `code`; returns false when it was not connected. */
  dropConnection(deviceJid: string, code: CloseCode, kind: CloseKind = profile.defaultCloseKind(code)): boolean {
    if (!CLOSE_CODES.includes(code)) throw new Error(`unsupported close code ${code}`);
    const device = this.registry.device(deviceJid);
    const connection = device ? this.deps.hub.online.get(device.jid) : undefined;
    if (!connection?.open) return false;
    connection.close(profile.closeStanza(code, kind));
    return true;
  }

  /**
   * The silence fault: the server sends the companion nothing (ping answers included) while its socket stays open, on
   * `connections` connections in a row: the current one, then the next ones once logged in (1: until its next
   * connection; 2: a reconnect does not help either). Returns whether the current connection went silent.
   */
  silence(deviceJid: string, connections = 1): boolean {
    if (!Number.isInteger(connections) || connections < 1) throw new Error('connections must be a whole number from 1');
    const device = this.registry.device(deviceJid);
    if (!device || device.virtual) throw new Error(`no linked device ${deviceJid}`);
    return this.deps.hub.silence(device, connections);
  }

  /**
   * The server logs the companion out for a classified reason, with the stanza it sends for it (profile.logoutStanza);
   * `unlinked` also removes the device (as unlink). Returns false when it was not connected.
   */
  logOut(deviceJid: string, reason: LogoutReason): boolean {
    if (!LOGOUT_REASONS.includes(reason)) throw new Error(`unknown logout reason ${reason}`);
    const device = this.registry.device(deviceJid);
    const connection = device ? this.deps.hub.online.get(device.jid) : undefined;
    if (!connection?.open) return false;
    // a silent connection still ends with the server's word
    connection.silent = false;
    if (reason === 'unlinked') {
      this.unlink(deviceJid);
      return true;
    }
    connection.close(profile.logoutStanza(reason));
    return true;
  }

  /** Is the companion connected and past its offline flush (i.e. Baileys is `open` and received pending notifications)? */
  isOnline(deviceJid: string): boolean {
    const device = this.registry.device(deviceJid);
    return !!device && !!this.deps.hub.online.get(device.jid)?.active;
  }

  async waitForOnline(deviceJid: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.isOnline(deviceJid)) {
      if (Date.now() > deadline) throw new Error(`${deviceJid} did not come online within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * The phone of `from` (a contact) sends text or any message content to a user jid, a phone number or a group jid.
   * `withoutAlt`: a 1:1 stanza names the sender only in the addressing `to` chose (no `sender_pn`/`sender_lid`).
   */
  send(from: string, to: string, content: string | proto.IMessage, options: { id?: string; withoutAlt?: boolean } = {}): Promise<SendResult> {
    const message: proto.IMessage = typeof content === 'string' ? { conversation: content } : content;
    return this.deps.phones.send(this.need(from), toJid(to), message, options.id, options.withoutAlt === true);
  }

  /**
   * The phone of `from` sends a 1:1 message that `to`'s companions cannot decrypt: it is encrypted to a one-time pre-key
   * they do not have (a stale bundle from the server), so each fails with 'Invalid PreKey ID' and sends a retry receipt.
   * `answerRetries`: the phone re-sends it on a fresh session for each retry receipt (recovered), or ignores them.
   */
  sendUndecryptable(from: string, to: string, content: string | proto.IMessage, options: { id?: string; answerRetries: boolean }): Promise<SendResult> {
    const message: proto.IMessage = typeof content === 'string' ? { conversation: content } : content;
    return this.deps.phones.send(this.need(from), toJid(to), message, options.id, false, { stalePreKey: true, ignoreRetries: !options.answerRetries });
  }

  /**
   * The phone of `phone` fails to decrypt the next message a companion sends it: it sends the companion a retry
   * receipt for it, and for each copy re-sent, another one, `retries` times in all; it accepts the copy after that.
   */
  failNextDecryption(phone: string, retries: number): void {
    this.deps.phones.retries.failNext(this.need(phone), retries);
  }

  /**
   * The phone of `phone` asks again for message `id` it received from a companion (a retry receipt with `count`, 1 by
   * default, to the device that sent it): the companion re-sends it, and the copy lands in the inbox again.
   */
  requestRetry(phone: string, id: string, count = 1): void {
    const account = this.need(phone);
    const got = this.deps.phones.inbox(account).find((m) => m.id === id && !m.ownDevice);
    const device = got ? this.registry.device(got.fromDevice) : undefined;
    if (!device) throw new Error(`phone ${phone} has no message ${id} from a companion`);
    this.deps.phones.retries.request(account, device, id, 'pn', count);
  }

  /** Retry receipts the virtual phones sent (`asked`), answered (`answered`) and ignored (`ignored`), oldest first. */
  retryLog(phone?: string): RetryRecord[] {
    return this.deps.phones.retries.log.filter((r) => phone === undefined || r.phone === phone);
  }

  /** The phone of `from` sends a receipt for `ids` in `chat`; `participant` names the author in a group. */
  sendReceipt(from: string, chat: string, ids: string[], type?: 'read' | 'played' | 'inactive', participant?: string): void {
    this.deps.phones.sendReceipt(this.need(from), toJid(chat), ids, type, participant ? toJid(participant) : undefined);
  }

  setPresence(phone: string, type: 'available' | 'unavailable'): void {
    this.deps.presence.set(this.need(phone), type);
  }

  sendChatState(from: string, to: string, state: ChatState): void {
    const node: BinaryNode = state === 'recording' ? { tag: 'composing', attrs: { media: 'audio' } } : { tag: state, attrs: {} };
    this.deps.presence.sendChatState(this.need(from), toJid(to), node);
  }

  /**
   * The phone of `from` calls `to` (an account): each companion of `to` gets the call offer (by LID with `caller_pn`
   * unless `addressing` is `pn`). Returns the call, whose `callId` the companions see.
   */
  placeCall(from: string, to: string, options: { callId?: string; isVideo?: boolean; addressing?: CallAddressing } = {}): CallRecord {
    return this.deps.calls.offer(this.need(from), this.need(to), options);
  }

  /** A call that rings stops: it rang out unanswered (`timeout`) or its caller hung up (`cancelled`). */
  endCall(callId: string, how: 'timeout' | 'cancelled' = 'timeout'): CallRecord {
    return this.deps.calls.end(callId, how);
  }

  /** A call as the caller's side sees it (`status: 'rejected'` once a companion's reject reached it), or undefined. */
  call(callId: string): CallRecord | undefined {
    return this.deps.calls.get(callId);
  }

  calls(): CallRecord[] {
    return this.deps.calls.list();
  }

  /** Resolves once a companion rejected the call (its reject stanza reached the caller). */
  waitForCallRejected(callId: string, timeoutMs?: number): Promise<CallRecord> {
    return this.deps.calls.waitForReject(callId, timeoutMs);
  }

  /** A group created on the phone of `owner`; members' companions get the create notification. */
  createGroup(owner: string, subject: string, members: string[], addressingMode?: AddressingMode): GroupInfo {
    const group = this.deps.groups.create(this.need(owner), subject, members.map((m) => this.need(m)), addressingMode);
    return this.deps.groups.info(group);
  }

  group(jid: string): GroupInfo | undefined {
    const group = this.deps.groups.get(jid);
    return group ? this.deps.groups.info(group) : undefined;
  }

  /** What the phone of `phone` received (decrypted), oldest first. */
  inbox(phone: string): PhoneMessage[] {
    return [...this.deps.phones.inbox(this.need(phone))];
  }

  waitForInbox(phone: string, match: (m: PhoneMessage) => boolean = () => true, timeoutMs = 5_000): Promise<PhoneMessage> {
    return this.deps.phones.waitForMessage(this.need(phone), match, timeoutMs);
  }

  /** Receipts companions sent for messages the phone of `phone` sent. */
  /** The app-state patches devices of `phone` sent (chat actions, labels, contacts), read with the account's key, oldest first. */
  appStatePatches(phone: string): AppStatePatchRecord[] {
    return this.deps.appState.patches(this.need(phone).phone);
  }

  receipts(phone: string): PhoneReceipt[] {
    return [...this.deps.phones.receipts(this.need(phone))];
  }

  /** Stanzas the server received (`in`) and sent (`out`), binary content replaced by its size. */
  stanzas(filter: StanzaFilter = {}): StanzaRecord[] {
    return this.deps.hub.recorder.list(filter);
  }

  /** Sorted distinct `tag xmlns type <child>` shapes; diff them across Baileys versions. */
  shapes(direction: 'in' | 'out' = 'in'): string[] {
    return this.deps.hub.recorder.shapes(direction);
  }

  clearStanzas(): void {
    this.deps.hub.recorder.clear();
  }

  /** What the device confirmed (receipts for messages, acks for receipts, notifications and calls): the server no longer redelivers it. */
  confirmations(deviceJid: string): Confirmation[] {
    const device = this.registry.device(deviceJid);
    return device ? [...(this.deps.hub.confirmations.get(device.jid) ?? [])] : [];
  }

  /** How many stanzas wait for a disconnected companion (those its last connection did not confirm included). */
  offlineQueue(deviceJid: string): number {
    const device = this.registry.device(deviceJid);
    return device ? (this.deps.hub.offline.get(device.jid)?.length ?? 0) : 0;
  }

  /** The picture (JPEG bytes as the client sent them) of an account (phone or JID) or a group, if one is set. */
  picture(target: string): { id: string; bytes: Buffer; url: string } | undefined {
    const stored = this.deps.pictures.picture(target);
    return stored ? { id: stored.id, bytes: stored.bytes, url: `https://${this.deps.media.host}${stored.path}` } : undefined;
  }

  /** A file uploaded from a phone (encrypted as WhatsApp does); the fields go into a media message. */
  uploadMedia(bytes: Buffer, mediaType: 'image' | 'video' | 'audio' | 'document' | 'sticker'): Promise<UploadedMedia> {
    return this.deps.media.upload(bytes, mediaType);
  }

  /** The phone of `phone` syncs these messages (keys as the phone sees them) to its companions as chat history. */
  /** The phone sends its companions a RECENT history sync of `messages`, and of `chats`' state (name, archived, pinned, muteEndTime, unreadCount…). */
  syncHistory(phone: string, messages: proto.IWebMessageInfo[], chats: proto.IConversation[] = []): Promise<void> {
    return this.deps.phones.syncHistory(this.need(phone), messages, { chats });
  }

  /**
   * The phone of `phone` holds these messages of `chat` (a contact's phone number or PN jid, or a group jid; keys as the
   * phone sees them) from before what it synced: a companion's history request (fetchMessageHistory) gets them.
   */
  seedOlderMessages(phone: string, chat: string, messages: proto.IWebMessageInfo[]): void {
    const jid = chat.includes('@') ? chat : `${chat}@s.whatsapp.net`;
    this.deps.phones.seedOlder(this.need(phone), jid, messages);
  }

  /** The history requests companions of `phone` sent to it (all phones when absent). */
  historyRequests(phone?: string): Phones['historyRequests'] {
    return this.deps.phones.historyRequests.filter((r) => phone === undefined || r.phone === phone);
  }

  mediaBlobs(): Array<{ path: string; size: number }> {
    return [...this.deps.media.blobs.values()].map((b) => ({ path: b.path, size: b.bytes.length }));
  }

  /** Connection attempts (and their peak per second) since `since` (ms since the epoch; all when absent), and current load. */
  stats(since?: number): EmulatorStats {
    const { stats, hub, phones } = this.deps;
    return {
      connectionAttempts: stats.attemptsSince(since),
      peakAttemptsPerSecond: stats.peakPerSecond(since),
      connectionsOpen: stats.open,
      devicesActive: [...hub.online.values()].filter((c) => c.active).length,
      phoneMessages: phones.receivedCount,
    };
  }

  /**
   * The server answers the next `count` (default 1) messages a companion of `from` sends to `to` (each any when absent;
   * `to` a user or a group jid) with `fault`: `{kind: 'nack', code}` acks them with that error code
   * (`<ack class="message" error="463">`), `{kind: 'withhold'}` sends no ack; neither is routed to the recipient.
   */
  failMessages(fault: MessageFault, options: { from?: string; to?: string; count?: number } = {}): void {
    this.deps.messageFaults.arm(fault, options);
  }

  /** The withheld messages are acked and routed now, oldest first (a late server ack); returns how many. */
  async releaseWithheld(): Promise<number> {
    const withheld = this.deps.messageFaults.withheld.splice(0);
    for (const { connection, node } of withheld) if (connection.open) await this.deps.router.acceptMessage(connection, node);
    return withheld.filter((w) => w.connection.open).length;
  }

  /** Disarms every message fault and forgets the withheld messages. */
  clearMessageFaults(): void {
    this.deps.messageFaults.clear();
  }

  /** Signal decryption failures of the virtual phones (should stay empty). */
  phoneFailures(): Array<{ phone: string; id: string; error: string }> {
    return [...this.deps.phones.failures];
  }

  private need(phoneOrJid: string): Account {
    const account = this.registry.account(phoneOrJid);
    if (!account) throw new Error(`no account ${phoneOrJid}`);
    return account;
  }
}

const toJid = (value: string): string => (value.includes('@') ? value : `${normalisePhone(value)}@s.whatsapp.net`);

// ---- HTTP ----

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Body = Record<string, unknown>;
type Route = (control: EmulatorControl, body: Body, query: URLSearchParams) => unknown;

const str = (body: Body, key: string, optional = false): string => {
  const value = body[key];
  if (typeof value === 'string' && value) return value;
  if (optional && value === undefined) return undefined as unknown as string;
  throw new HttpError(400, `"${key}" must be a non-empty string`);
};

const messageJson = (m: PhoneMessage) => ({ ...m, message: proto.Message.toObject(proto.Message.fromObject(m.message), { longs: String, bytes: String }) });

/** `METHOD /control/…` → handler; bodies and answers are JSON. */
export const CONTROL_ROUTES: Record<string, Route> = {
  'GET /control/accounts': (c) => c.accounts(),
  'POST /control/accounts': (c, b) =>
    c.createAccount({
      phone: str(b, 'phone'),
      ...(typeof b.pushName === 'string' ? { pushName: b.pushName } : {}),
      ...(typeof b.business === 'boolean' ? { business: b.business } : {}),
      ...(typeof b.about === 'string' ? { about: b.about } : {}),
      ...(typeof b.lid === 'string' ? { lid: b.lid } : {}),
    }),
  'GET /control/devices': (c, _b, q) => c.devices(q.get('phone') ?? undefined),
  'POST /control/scan': (c, b) => c.scanQr(str(b, 'qr'), str(b, 'phone')),
  'POST /control/pairing-code': (c, b) => {
    if (b.restart !== undefined && b.restart !== 'stream-error' && b.restart !== 'socket') throw new HttpError(400, 'restart must be stream-error or socket');
    return c.enterPairingCode(str(b, 'phone'), str(b, 'code'), typeof b.timeoutMs === 'number' ? b.timeoutMs : undefined, b.restart as PairingRestart | undefined);
  },
  'POST /control/unlink': (c, b) => c.unlink(str(b, 'jid')),
  'POST /control/drop': (c, b) => {
    const code = Number(b.code) as CloseCode;
    if (!CLOSE_CODES.includes(code)) throw new HttpError(400, `code must be one of ${CLOSE_CODES.join(', ')}`);
    const kind = b.kind as CloseKind | undefined;
    if (kind !== undefined && kind !== 'stream-error' && kind !== 'failure' && kind !== 'socket') throw new HttpError(400, 'kind must be stream-error, failure or socket');
    return { dropped: c.dropConnection(str(b, 'jid'), code, kind) };
  },
  'POST /control/silence': (c, b) => {
    if (b.connections !== undefined && (!Number.isInteger(b.connections) || (b.connections as number) < 1)) throw new HttpError(400, 'connections must be a whole number from 1');
    return { silenced: c.silence(str(b, 'jid'), b.connections as number | undefined) };
  },
  'POST /control/logout': (c, b) => {
    const reason = str(b, 'reason') as LogoutReason;
    if (!LOGOUT_REASONS.includes(reason)) throw new HttpError(400, `reason must be one of ${LOGOUT_REASONS.join(', ')}`);
    return { loggedOut: c.logOut(str(b, 'jid'), reason) };
  },
  'GET /control/online': (c, _b, q) => ({ online: c.isOnline(q.get('jid') ?? '') }),
  'POST /control/wait-online': async (c, b) => {
    await c.waitForOnline(str(b, 'jid'), typeof b.timeoutMs === 'number' ? b.timeoutMs : undefined);
    return { online: true };
  },
  'POST /control/send': (c, b) => {
    const content = b.message !== undefined ? proto.Message.fromObject(b.message as object) : str(b, 'text');
    return c.send(str(b, 'from'), str(b, 'to'), content, { ...(typeof b.id === 'string' ? { id: b.id } : {}), withoutAlt: b.withoutAlt === true });
  },
  'POST /control/send-undecryptable': async (c, b) => {
    if (typeof b.answerRetries !== 'boolean') throw new HttpError(400, '"answerRetries" must be a boolean');
    return c.sendUndecryptable(str(b, 'from'), str(b, 'to'), str(b, 'text'), { ...(typeof b.id === 'string' ? { id: b.id } : {}), answerRetries: b.answerRetries });
  },
  'POST /control/fail-decryption': (c, b) => {
    const retries = Number(b.retries);
    if (!Number.isInteger(retries) || retries < 1 || retries > 20) throw new HttpError(400, '"retries" must be an integer from 1 to 20');
    c.failNextDecryption(str(b, 'phone'), retries);
    return { ok: true };
  },
  'POST /control/request-retry': (c, b) => {
    c.requestRetry(str(b, 'phone'), str(b, 'id'), typeof b.count === 'number' ? b.count : undefined);
    return { ok: true };
  },
  'GET /control/retries': (c, _b, q) => c.retryLog(q.get('phone') ?? undefined),
  'POST /control/receipt': (c, b) => {
    const ids = Array.isArray(b.ids) ? b.ids.map(String) : [str(b, 'id')];
    c.sendReceipt(str(b, 'from'), str(b, 'chat'), ids, b.type as 'read' | 'played' | undefined, str(b, 'participant', true));
    return { ok: true };
  },
  'POST /control/presence': (c, b) => {
    const type = str(b, 'type');
    if (type !== 'available' && type !== 'unavailable') throw new HttpError(400, 'type must be available or unavailable');
    c.setPresence(str(b, 'phone'), type);
    return { ok: true };
  },
  'POST /control/chatstate': (c, b) => {
    const state = str(b, 'state');
    if (state !== 'composing' && state !== 'recording' && state !== 'paused') throw new HttpError(400, 'state must be composing, recording or paused');
    c.sendChatState(str(b, 'from'), str(b, 'to'), state);
    return { ok: true };
  },
  'POST /control/groups': (c, b) =>
    c.createGroup(
      str(b, 'owner'),
      str(b, 'subject'),
      Array.isArray(b.members) ? b.members.map(String) : [],
      b.addressingMode === 'pn' || b.addressingMode === 'lid' ? b.addressingMode : undefined,
    ),
  'GET /control/group': (c, _b, q) => c.group(q.get('jid') ?? '') ?? null,
  'POST /control/call': (c, b) => {
    if (b.addressing !== undefined && b.addressing !== 'lid' && b.addressing !== 'pn') throw new HttpError(400, 'addressing must be lid or pn');
    return c.placeCall(str(b, 'from'), str(b, 'to'), {
      ...(typeof b.callId === 'string' ? { callId: b.callId } : {}),
      ...(typeof b.isVideo === 'boolean' ? { isVideo: b.isVideo } : {}),
      ...(b.addressing ? { addressing: b.addressing as CallAddressing } : {}),
    });
  },
  'POST /control/call-end': (c, b) => {
    const how = b.how ?? 'timeout';
    if (how !== 'timeout' && how !== 'cancelled') throw new HttpError(400, 'how must be timeout or cancelled');
    return c.endCall(str(b, 'callId'), how);
  },
  'GET /control/call': (c, _b, q) => {
    const call = c.call(q.get('id') ?? '');
    if (!call) throw new HttpError(404, 'no such call');
    return call;
  },
  'POST /control/message-faults': (c, b) => {
    const kind = str(b, 'kind');
    if (kind !== 'nack' && kind !== 'withhold') throw new HttpError(400, 'kind must be nack or withhold');
    const count = b.count === undefined ? undefined : Number(b.count);
    if (count !== undefined && (!Number.isInteger(count) || count < 1 || count > 1000)) throw new HttpError(400, 'count must be an integer from 1 to 1000');
    try {
      c.failMessages(kind === 'nack' ? { kind, code: String(b.code ?? '') } : { kind }, { from: str(b, 'from', true), to: str(b, 'to', true), ...(count ? { count } : {}) });
    } catch (error) {
      throw new HttpError(400, (error as Error).message);
    }
    return { ok: true };
  },
  'POST /control/message-faults/release': async (c) => ({ released: await c.releaseWithheld() }),
  'DELETE /control/message-faults': (c) => {
    c.clearMessageFaults();
    return { ok: true };
  },
  'GET /control/inbox': (c, _b, q) => c.inbox(q.get('phone') ?? '').map(messageJson),
  'POST /control/wait-inbox': async (c, b) => {
    const text = typeof b.text === 'string' ? b.text : undefined;
    const from = typeof b.from === 'string' ? b.from : undefined;
    const m = await c.waitForInbox(
      str(b, 'phone'),
      (msg) => (text === undefined || msg.text === text) && (from === undefined || msg.from === from || msg.from.startsWith(`${from}@`)),
      typeof b.timeoutMs === 'number' ? b.timeoutMs : undefined,
    );
    return messageJson(m);
  },
  'GET /control/receipts': (c, _b, q) => c.receipts(q.get('phone') ?? ''),
  'GET /control/app-state': (c, _b, q) => c.appStatePatches(q.get('phone') ?? ''),
  'GET /control/stanzas': (c, _b, q) => {
    const filter: StanzaFilter = {};
    const direction = q.get('direction');
    if (direction === 'in' || direction === 'out') filter.direction = direction;
    for (const key of ['device', 'tag', 'xmlns'] as const) {
      const value = q.get(key);
      if (value) filter[key] = value;
    }
    if (q.get('since')) filter.since = Number(q.get('since'));
    return c.stanzas(filter);
  },
  'GET /control/shapes': (c, _b, q) => c.shapes(q.get('direction') === 'out' ? 'out' : 'in'),
  'GET /control/stats': (c, _b, q) => c.stats(q.get('since') ? Number(q.get('since')) : undefined),
  'GET /control/confirmations': (c, _b, q) => c.confirmations(q.get('jid') ?? ''),
  'GET /control/offline-queue': (c, _b, q) => ({ count: c.offlineQueue(q.get('jid') ?? '') }),
  'GET /control/picture': (c, _b, q) => {
    const picture = c.picture(q.get('target') ?? '');
    if (!picture) throw new HttpError(404, 'no picture');
    return { id: picture.id, size: picture.bytes.length, url: picture.url };
  },
};

export async function handleControlRequest(control: EmulatorControl, extra: Record<string, Route>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const route = extra[`${req.method} ${url.pathname}`] ?? CONTROL_ROUTES[`${req.method} ${url.pathname}`];
  let status = 200;
  let answer: unknown;
  try {
    if (!route) throw new HttpError(404, `no route ${req.method} ${url.pathname}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Body = {};
    if (text) {
      try {
        body = JSON.parse(text) as Body;
      } catch {
        throw new HttpError(400, 'body is not JSON');
      }
    }
    answer = await route(control, body, url.searchParams);
  } catch (error) {
    status = error instanceof HttpError ? error.status : 500;
    answer = { error: error instanceof Error ? error.message : String(error) };
  }
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(answer ?? null));
}

export type ControlRoute = Route;
