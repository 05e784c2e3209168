// The Engine interface every network implementation provides, and the normalised values it reports.
import type { EventType } from '../events/catalogue.js';
import type { DecryptionSignal } from './decryption.js';
import type { UrlPolicy } from '../net/url-guard.js';
import type { MessageFailure } from './server-acks.js';

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
  get(key: string): Promise<string | undefined>;
  /** the keys found (one read for all of them) */
  getMany(keys: string[]): Promise<Map<string, string>>;
  /** writes every entry in one transaction, durably, and settles once it is committed; a null value deletes the key */
  set(entries: Record<string, string | null>): Promise<void>;
  /**
   * Writes the entries inside the open tick transaction, so they commit with the events written in the same tick: at
   * once, without a wait (undefined); or, in a cluster, after the lease check that fences them, as a promise that rejects
   * when this node may no longer write them (nothing of them is written then, and their events must not be confirmed).
   */
  stage(entries: Record<string, string | null>): Promise<void> | undefined;
  /** deletes every entry, durably */
  clear(): Promise<void>;
  isEmpty(): Promise<boolean>;
}

/** Why a connection went down, in words an operator can act on (SPEC §3 reasons say what the session does next). */
export type CloseCauseCode =
  | 'NETWORK_REFUSED'
  | 'NETWORK_TIMEOUT'
  | 'NETWORK_DNS'
  | 'NETWORK_TLS'
  | 'NETWORK_PROXY'
  | 'NETWORK_LOST'
  | 'STREAM_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'LOGGED_OUT'
  | 'BANNED'
  | 'TEMPORARILY_BANNED'
  | 'ACCOUNT_LOCKED'
  | 'KEY_ERROR'
  | 'CONNECTION_REPLACED'
  | 'LOGIN_REFUSED'
  | 'QR_TIMEOUT';
export const CLOSE_CAUSE_CODES: readonly CloseCauseCode[] = [
  'NETWORK_REFUSED',
  'NETWORK_TIMEOUT',
  'NETWORK_DNS',
  'NETWORK_TLS',
  'NETWORK_PROXY',
  'NETWORK_LOST',
  'STREAM_ERROR',
  'SERVICE_UNAVAILABLE',
  'LOGGED_OUT',
  'BANNED',
  'TEMPORARILY_BANNED',
  'ACCOUNT_LOCKED',
  'KEY_ERROR',
  'CONNECTION_REPLACED',
  'LOGIN_REFUSED',
  'QR_TIMEOUT',
];

export interface CloseCause {
  code: CloseCauseCode;
  /** the underlying error, with the network's close code where there is one */
  message: string;
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
      /** why; the manager derives one from `reason` when the engine gives none */
      cause?: CloseCause;
    };

/** A phone JID and the LID of the same person (bare JIDs: no device part). */
export interface IdentityPair {
  pn: string;
  lid: string;
}

/**
 * Where a session learnt a pair: a message or receipt (`message`), a history sync (`history`), the address book
 * (`contact`), a group's member list (`group`), a call (`call`), a number lookup it asked for (`lookup`), or the network's
 * own mapping notice (`network`).
 */
export type IdentitySource = 'message' | 'history' | 'contact' | 'group' | 'call' | 'lookup' | 'network';
export const IDENTITY_SOURCES: readonly IdentitySource[] = ['message', 'history', 'contact', 'group', 'call', 'lookup', 'network'];

/** Where a session keeps the pairs it learnt, so they survive restarts (the gateway's store; bounded by the engine). */
export interface IdentityStore {
  /** every stored pair, least recently used first */
  load(): Promise<IdentityPair[]>;
  /**
   * stores or refreshes `pairs` and forgets the numbers in `evicted`, in one write (staged: not waited for); a pair with
   * a `source` was learnt or changed (its origin is recorded), one without is a known pair seen again
   */
  save(pairs: Array<IdentityPair & { source?: IdentitySource }>, evicted?: string[]): void;
}

export interface EngineSessionHooks {
  connection(update: ConnectionUpdate): void;
  /** a normalised domain event (message.received, presence.update, …) */
  event(type: EventType, payload: Record<string, unknown>): void;
  /**
   * Settles once the events reported so far are stored and committed, `alsoWrite` (run with their last writes)
   * included; rejects when one of them could not be stored. Engines confirm to the network only after it settles.
   */
  committed?(alsoWrite?: () => Promise<void> | undefined | void): Promise<void>;
  /** a fact for the session's decryption counters (retry receipts, failures, exhausted retries); src/engine/decryption.ts */
  decryption?(signal: DecryptionSignal): void;
}

export interface SessionOptions {
  name: string;
  proxy?: string;
  /** the outbound URL policy the proxy host is checked against at every connection */
  urlPolicy?: UrlPolicy;
  config: Record<string, unknown>;
  auth: AuthStateStore;
  hooks: EngineSessionHooks;
  /** where the phone-number ↔ LID pairs this session learns are kept (absent: kept in memory only) */
  identities?: IdentityStore;
  /** the pairs `identities` held when the session was made (the session manager loads them) */
  knownIdentities?: IdentityPair[];
  /** a message of the gateway's store by id (chatId narrows), with its engine copy (`raw`); engines re-send or decrypt with it */
  lookupMessage?(id: string, chatId?: string): Promise<MessageRef | undefined>;
  /** whether the gateway's store holds a message of this id, without opening its sealed copy (a redelivery is confirmed with it) */
  messageStored?(id: string): Promise<boolean>;
}

/** One connected (or connecting) account: its lifecycle, plus the operations of the network. */
export interface EngineSession extends MessagingOps, ChatOps, CallOps {
  readonly engine: EngineName;
  /** open the connection; reports qr/open/close through the hooks */
  connect(): Promise<void>;
  /** close the connection, keep credentials */
  disconnect(): Promise<void>;
  /** unlink the device and forget credentials */
  logout(): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  /** when the last frame came from the network (keep-alive answers included), ms since the epoch; undefined when not open */
  lastFrameAt(): number | undefined;
  /** asks the network for an answer (a ping); resolves when a frame answers within `timeoutMs`, rejects otherwise */
  probe(timeoutMs: number): Promise<void>;
  /**
   * A soft reconnect: the open connection is dropped without a close report and a new one opens with the same
   * credentials; resolves once it is open, rejects when it closes instead (that close is reported as usual).
   */
  reconnect(): Promise<void>;
}

export interface Engine {
  readonly name: EngineName;
  /** its sessions connect to a remote network: their restore at start is spread (sessions.restoreRatePerSecond) */
  readonly connectsToNetwork?: boolean;
  createSession(options: SessionOptions): EngineSession;
  close(): Promise<void>;
}

// ---- messaging ----

export type MediaKind = 'image' | 'video' | 'voice' | 'file' | 'sticker';
export type MessageType = 'text' | MediaKind | 'poll' | 'location' | 'contact';
export type DeliveryStatus = 'pending' | 'sent' | 'delivered' | 'read';
/** a sent message's status: how far it got, or `failed` (the network refused it, or never acked it) */
export type MessageStatus = DeliveryStatus | 'failed';
export type TypingState = 'composing' | 'recording' | 'paused';

/** A download written straight to a file (a URL send), never held in memory; the object's identity names the download. */
export interface StagedFile {
  readonly path: string;
}

/** Media to send: bytes in hand (base64), or a file on disk (a URL download), with its size either way. */
export type OutgoingMedia = { mimeType: string; filename?: string; size: number } & ({ data: Buffer; file?: undefined } | { file: StagedFile; data?: undefined });

/** The preview of the first link of a text, built by the gateway (the engines never fetch a page themselves). */
export interface LinkPreview {
  /** the URL as it appears in the text */
  url: string;
  title: string;
  description?: string;
  /** a small JPEG */
  thumbnail?: Buffer;
}

/** A message to send, already validated and with media bytes in hand. */
export type OutgoingContent =
  | { type: 'text'; text: string; preview?: LinkPreview }
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
  /** a status post (`status@broadcast`): the people who may see it (user JIDs) */
  statusViewers?: string[];
  /**
   * the message's id, chosen by the gateway (a send of the governor's queue: chosen when it was queued, so a send cut by
   * a crash goes out again under the same id); absent, the engine makes one. Network-shaped: 3EB0 and hex digits.
   */
  messageId?: string;
}

/** A poll vote the session cast. */
export interface CastVote {
  messageId: string;
  /** ISO 8601 */
  timestamp: string;
}

export interface SentMessage {
  messageId: string;
  /** ISO 8601 */
  timestamp: string;
  /**
   * what the network answered within messages.sendAckWaitMs: `sent` (server ack), `failed` (refused: `failure` says
   * why), `pending` (no answer yet: it follows as message.ack or message.failed)
   */
  status: MessageStatus;
  failure?: MessageFailure;
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
  /** the bytes are in this file (a URL send's download) */
  file?: StagedFile;
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
  /** votes on a poll (`selectedOptions` are option names of it; empty withdraws the vote) */
  votePoll(poll: MessageRef, selectedOptions: string[]): Promise<CastVote>;
  /** the bytes of a media attachment whose `ref` the engine gave; throws MEDIA_EXPIRED when gone */
  downloadMedia?(ref: unknown): Promise<NodeJS.ReadableStream>;
  /**
   * Asks the phone for up to `count` messages of the anchor's chat older than the anchor (the oldest the gateway stores
   * of that chat). Answers once the request left; the messages arrive later as history.sync events (syncType
   * ON_DEMAND) carrying the returned request id, and may never arrive (the phone is offline, or has none older).
   */
  requestHistory(anchor: HistoryAnchor, count: number): Promise<{ requestId: string }>;
}

/** The message older history is asked for from: a stored message, with its time. */
export interface HistoryAnchor extends MessageRef {
  /** ms since the epoch */
  timestamp: number;
}

/** The most messages one history request may ask for (WhatsApp's own limit for an on-demand history sync). */
export const MAX_HISTORY_REQUEST = 50;
/** The most messages of one ON_DEMAND history batch an engine passes on (the rest is dropped): a phone answers a request for 50. */
export const MAX_ON_DEMAND_BATCH = 500;

// ---- chats: groups, channels, presence, contacts, labels ----

/** A group member; `phoneNumber` may be missing in LID-addressed groups. */
export interface GroupMemberInfo {
  /** canonical id: the phone JID when known, otherwise the LID */
  jid: string;
  /** E.164 */
  phoneNumber?: string;
  lid?: string;
  isAdmin: boolean;
  /** the creator */
  isSuperAdmin: boolean;
}

export interface GroupInfo {
  id: string;
  subject: string;
  description: string;
  ownerLid?: string;
  ownerPhoneNumber?: string;
  /** Unix seconds */
  createdAt: number;
  participants: GroupMemberInfo[];
}

/** What an invite code shows without joining. */
export interface InviteInfo {
  id: string;
  subject: string;
  size: number;
  createdAt: number;
  creatorLid?: string;
  participants: GroupMemberInfo[];
}

export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';

/** Why one participant of a request failed (the network answers per participant: 403 privacy, 408 recently left, 409 already a member …). */
export type ParticipantFailure = 'NOT_REGISTERED' | 'ALREADY_MEMBER' | 'NOT_MEMBER' | 'RECENTLY_LEFT' | 'PRIVACY_RESTRICTED' | 'NOT_ALLOWED' | 'FAILED';

export interface ParticipantOutcome {
  /** the participant as it was asked for */
  jid: string;
  ok: boolean;
  failure?: ParticipantFailure;
  message?: string;
}

/** A picture already fetched and checked (JPEG or PNG); `sourceUrl` when it came from a URL. */
export interface ImageInput {
  data: Buffer;
  mimeType: string;
  sourceUrl?: string;
}

export interface ChannelInfo {
  id: string;
  name: string;
  description: string;
  pictureUrl?: string;
  followers: number;
  /** the session's relation to the channel; `guest` views it in preview mode */
  role: 'owner' | 'follower' | 'guest';
  muted: boolean;
}

export interface ContactInfo {
  jid: string;
  phoneNumber?: string;
  lid?: string;
  /** the name the contact set for itself (push name) */
  name?: string;
  businessName?: string;
  /** the name in the session's address book */
  savedName?: string;
}

export interface NumberCheck {
  /** E.164 */
  phoneNumber: string;
  registered: boolean;
  lid?: string;
}

export interface LabelInfo {
  id: string;
  name: string;
  /** palette index 0–19 */
  color: number;
}

/**
 * Groups, channels, presence, contacts and labels. Arguments are normalised JIDs (or, for checkNumbers, phone
 * digits). Failures are GatewayErrors: GROUP_NOT_FOUND, NOT_GROUP_MEMBER, NOT_GROUP_ADMIN, INVITE_NOT_FOUND,
 * CHANNEL_NOT_FOUND, NOT_CHANNEL_OWNER, NOT_BUSINESS_ACCOUNT, LABEL_NOT_FOUND. Every change, including the
 * session's own, reaches the application as events through the hooks (group.update, group.participant,
 * contact.update, blocklist.update, labels.update, newsletter.update, presence.update), as the network echoes it.
 */
export interface ChatOps {
  createGroup(subject: string, participants: string[]): Promise<{ group: GroupInfo; outcomes: ParticipantOutcome[] }>;
  listGroups(): Promise<GroupInfo[]>;
  getGroup(groupId: string): Promise<GroupInfo>;
  leaveGroup(groupId: string): Promise<void>;
  /** where the network has no delete (Baileys): revoke the invite, remove every other member, leave */
  deleteGroup(groupId: string): Promise<void>;
  setGroupSubject(groupId: string, subject: string): Promise<void>;
  setGroupDescription(groupId: string, description: string): Promise<void>;
  /** null removes the picture */
  setGroupPicture(groupId: string, image: ImageInput | null): Promise<void>;
  updateParticipants(groupId: string, action: ParticipantAction, jids: string[]): Promise<ParticipantOutcome[]>;
  getInviteCode(groupId: string): Promise<string>;
  /** returns the new code; the old one stops working */
  revokeInviteCode(groupId: string): Promise<string>;
  getInviteInfo(code: string): Promise<InviteInfo>;
  /** returns the group id */
  acceptInvite(code: string): Promise<string>;

  createChannel(input: { name: string; description?: string; picture?: ImageInput }): Promise<ChannelInfo>;
  getChannel(channelId: string): Promise<ChannelInfo>;
  deleteChannel(channelId: string): Promise<void>;
  followChannel(channelId: string): Promise<void>;
  unfollowChannel(channelId: string): Promise<void>;
  muteChannel(channelId: string): Promise<void>;
  unmuteChannel(channelId: string): Promise<void>;

  setPresence(presence: 'available' | 'unavailable'): Promise<void>;
  /** presence.update events for `jid` follow (the network may send the current state at once) */
  subscribePresence(jid: string): Promise<void>;

  /** undefined when the number is not on the network */
  getContact(jid: string): Promise<ContactInfo | undefined>;
  /** a contact's or a group's picture URL; undefined when there is none or the contact hides it */
  getProfilePicture(jid: string): Promise<string | undefined>;
  /** sets (null: removes) the session's own profile picture */
  setProfilePicture(image: ImageInput | null): Promise<void>;
  checkNumbers(phoneDigits: string[]): Promise<NumberCheck[]>;
  setBlocked(jid: string, blocked: boolean): Promise<void>;

  /** creates or replaces a label; the caller picks the id (the network lets clients choose) */
  saveLabel(label: LabelInfo): Promise<void>;
  deleteLabel(labelId: string): Promise<void>;
  setChatLabel(chatId: string, labelId: string, assigned: boolean): Promise<void>;

  /**
   * Changes the chat's state in the account's chat list (WhatsApp's app state, shared by all its devices); the matching
   * chat.* event follows, as the network echoes it. `last` is the chat's newest stored message: WhatsApp ties an archive
   * or read change to it (Baileys needs it for those two).
   */
  changeChat(chatId: string, change: ChatStateChange, last?: LastMessage): Promise<void>;
}

// ---- calls ----

/** Who rejected a call the session rejected: a request to the reject route, or the session's `config.calls` policy. */
export type CallRejecter = 'gateway' | 'auto';
/**
 * Who or what ended a call: the session (`gateway`: the reject route; `auto`: `config.calls.reject`), another device of
 * the account declining it (`device`), the caller hanging up before anyone answered (`caller`), or nobody answering in
 * time (`timeout`).
 */
export type CallEndedBy = CallRejecter | 'device' | 'caller' | 'timeout';
export const CALL_ENDED_BY: readonly CallEndedBy[] = ['gateway', 'auto', 'device', 'caller', 'timeout'];

export interface CallOps {
  /**
   * Rejects an incoming call that still rings (the caller sees it declined); call.rejected follows with `endedBy: by`.
   * CALL_NOT_FOUND for a call the session did not hear ring recently, CALL_ENDED for one that is over.
   */
  rejectCall(callId: string, by: CallRejecter): Promise<void>;
}

/** What a chat action changes; `until` of a mute is ms since the epoch, or -1 for good. */
export type ChatStateChange =
  | { action: 'archive' | 'unarchive' | 'pin' | 'unpin' | 'unmute' | 'read' | 'unread' }
  | { action: 'mute'; until: number };

/** A chat as a history sync describes it (the fields it carries); engines hand these over in history.sync's `chats`. */
export interface SyncedChat {
  chatId: string;
  name?: string;
  archived?: boolean;
  /** ms; null: not pinned */
  pinnedAt?: number | null;
  /** ms; -1 for good; null: not muted */
  muteUntil?: number | null;
  unreadCount?: number;
  markedUnread?: boolean;
  /** ms: the conversation's last activity */
  lastAt?: number;
}

/** A chat's newest message as the store holds it: a message reference and its time (ms). */
export type LastMessage = MessageRef & { timestamp: number };
