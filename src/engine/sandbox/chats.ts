// The chat operations (groups, channels, presence, contacts, labels) of one open sandbox account, and how SandboxSession exposes them.
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { CALL_EVENT, callPayload, type CallStatus } from '../calls.js';
import { jidUser, userJid } from '../jid.js';
import type { CallEndedBy, CallRejecter, ChatOps } from '../types.js';
import { accountOf, profileOf, refOf } from './accounts.js';
import { SandboxChannels } from './channels.js';
import { SandboxContacts } from './contacts.js';
import { GroupNetwork, SandboxGroups } from './groups.js';
import { SandboxLabels } from './labels.js';
import { SandboxChatStates } from './chat-state.js';
import type { SandboxNetwork } from './network.js';
import { SandboxPresence } from './presence.js';
import type { SandboxSession } from './session.js';

export interface SandboxAccount {
  pushName: string;
  business: boolean;
  businessName?: string;
}

/**
 * What happens to a call a contact places: it rings (`received`), rings out unanswered (`missed`), its caller hangs up
 * before an answer (`cancelled`), or another device of the account answers (`accepted`) or declines it (`rejected`).
 */
export type CallOutcome = 'received' | 'missed' | 'cancelled' | 'accepted' | 'rejected';

const CALL_ENDS: Record<Exclude<CallOutcome, 'received'>, { status: Exclude<CallStatus, 'ringing'>; endedBy?: CallEndedBy }> = {
  missed: { status: 'missed', endedBy: 'timeout' },
  cancelled: { status: 'missed', endedBy: 'caller' },
  accepted: { status: 'accepted' },
  rejected: { status: 'rejected', endedBy: 'device' },
};
export type ChatAction = 'archive' | 'unarchive' | 'pin' | 'unpin' | 'mute' | 'unmute' | 'read' | 'unread' | 'clear' | 'delete';

type Part = 'groups' | 'channels' | 'contacts' | 'presence' | 'labels' | 'chatStates';

/** Which part of SandboxChats answers each ChatOps method (a missing method fails the type check). */
const PART_OF: Record<keyof ChatOps, Part> = {
  createGroup: 'groups',
  listGroups: 'groups',
  getGroup: 'groups',
  leaveGroup: 'groups',
  deleteGroup: 'groups',
  setGroupSubject: 'groups',
  setGroupDescription: 'groups',
  setGroupPicture: 'groups',
  updateParticipants: 'groups',
  getInviteCode: 'groups',
  revokeInviteCode: 'groups',
  getInviteInfo: 'groups',
  acceptInvite: 'groups',
  createChannel: 'channels',
  getChannel: 'channels',
  deleteChannel: 'channels',
  followChannel: 'channels',
  unfollowChannel: 'channels',
  muteChannel: 'channels',
  unmuteChannel: 'channels',
  setPresence: 'presence',
  subscribePresence: 'presence',
  getContact: 'contacts',
  getProfilePicture: 'contacts',
  setProfilePicture: 'contacts',
  checkNumbers: 'contacts',
  setBlocked: 'contacts',
  saveLabel: 'labels',
  deleteLabel: 'labels',
  setChatLabel: 'labels',
  changeChat: 'chatStates',
};

export class SandboxChats {
  readonly groups: SandboxGroups;
  readonly channels: SandboxChannels;
  readonly contacts: SandboxContacts;
  readonly presence: SandboxPresence;
  readonly labels: SandboxLabels;
  readonly chatStates: SandboxChatStates;
  /** group rules for virtual contacts acting through the control route */
  readonly groupNetwork: GroupNetwork;

  constructor(
    private readonly network: SandboxNetwork,
    readonly digits: string,
    private readonly session: SandboxSession,
    account: SandboxAccount,
  ) {
    // what the account shows every other account
    const profile = profileOf(network, digits);
    profile.pushName = account.pushName;
    if (account.businessName) profile.businessName = account.businessName;
    accountOf(network, digits).business = account.business;
    this.groups = new SandboxGroups(network, digits);
    this.channels = new SandboxChannels(network, digits);
    this.contacts = new SandboxContacts(network, digits, session);
    this.presence = new SandboxPresence(network, digits, session);
    this.labels = new SandboxLabels(network, digits, session);
    this.chatStates = new SandboxChatStates(network, digits, session);
    this.groupNetwork = new GroupNetwork(network);
  }

  /**
   * Sandbox control: the contact `from` places a call to the account (call.received), or `callId` names a call that
   * rings and `outcome` says how it ends. A new call with an ending outcome rings and ends at once. Returns the call id.
   */
  call(from: string, outcome: CallOutcome, options: { callId?: string; isVideo?: boolean } = {}): string {
    const callId = options.callId ?? randomBytes(16).toString('hex').toUpperCase();
    const book = this.session.calls;
    const known = book.get(callId);
    const now = new Date().toISOString();
    if (known && jidUser(known.caller) !== from) throw new GatewayError('CALL_NOT_FOUND', `call ${callId} is not a call from +${from}`);
    if (known && (outcome === 'received' || known.status !== 'ringing')) {
      if (known.status === 'ringing') return callId;
      throw new GatewayError('CALL_ENDED', `call ${callId} was ${known.status}${known.endedBy ? ` (by ${known.endedBy})` : ''}`);
    }
    if (!known) {
      const offered = book.offer({ callId, caller: userJid(from), from: refOf(this.network, from), chatId: userJid(from), isVideo: options.isVideo ?? false, isGroup: false, offeredAt: now });
      this.network.placeCall({ callId, callerDigits: from, calleeDigits: this.digits, isVideo: options.isVideo ?? false, offeredAt: now, callerSaw: 'ringing' });
      this.session.deliver('call.received', callPayload(offered!, now));
      if (outcome === 'received') return callId;
    }
    const end = CALL_ENDS[outcome as Exclude<CallOutcome, 'received'>];
    const ended = book.end(callId, end.status, end.endedBy);
    if (!ended) throw new GatewayError('CALL_ENDED', `call ${callId} is being rejected`);
    this.network.callEnded(this.digits, callId, end.status);
    this.session.deliver(CALL_EVENT[end.status], callPayload(ended, now));
    return callId;
  }

  /** Sandbox control: a call placed to this account, as its caller's phone shows it (a reject reached it: `rejected`). */
  callerView(callId: string): { callId: string; from: string; isVideo: boolean; offeredAt: string; callerSaw: string } {
    const call = this.network.call(this.digits, callId);
    if (!call) throw new GatewayError('CALL_NOT_FOUND', `no call ${callId} was placed to this account`);
    return { callId, from: `+${call.callerDigits}`, isVideo: call.isVideo, offeredAt: call.offeredAt, callerSaw: call.callerSaw };
  }

  /** The session rejects a call that rings: the caller's phone shows it declined, and call.rejected follows. */
  rejectCall(callId: string, by: CallRejecter): void {
    const book = this.session.calls;
    book.startReject(callId);
    this.network.callEnded(this.digits, callId, 'rejected');
    const rejected = book.rejected(callId, by);
    if (rejected) this.session.deliver('call.rejected', callPayload(rejected, new Date().toISOString()));
  }

  /** Sandbox control: the phone (another device of the account) changes a chat's state; the matching chat.* event follows. */
  chatChanged(chatId: string, action: ChatAction, muteUntil?: string): void {
    const timestamp = new Date().toISOString();
    switch (action) {
      case 'archive':
      case 'unarchive':
        this.session.deliver('chat.archive', { chatId, archived: action === 'archive', timestamp });
        return;
      case 'pin':
      case 'unpin':
        this.session.deliver('chat.pin', { chatId, pinned: action === 'pin', timestamp });
        return;
      case 'mute':
      case 'unmute':
        this.session.deliver('chat.mute', { chatId, muted: action === 'mute', muteEndTime: action === 'mute' ? (muteUntil ?? null) : null, timestamp });
        return;
      case 'read':
      case 'unread':
        this.session.deliver('chat.read', { chatId, read: action === 'read', timestamp });
        return;
      case 'clear':
        this.session.deliver('chat.clear', { chatId, timestamp });
        return;
      case 'delete':
        this.session.deliver('chat.delete', { chatId, timestamp });
        return;
    }
  }
}

/**
 * Gives SandboxSession the ChatOps methods: each forwards to the open account's SandboxChats, and fails with
 * SESSION_NOT_CONNECTED while the session is not open.
 */
export function delegateChatOps(prototype: object): void {
  for (const [op, part] of Object.entries(PART_OF) as Array<[keyof ChatOps, Part]>) {
    Object.defineProperty(prototype, op, {
      configurable: true,
      writable: true,
      value: async function chatOp(this: { chats?: SandboxChats; name: string }, ...args: unknown[]): Promise<unknown> {
        if (!this.chats) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
        const target = this.chats[part] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
        return target[op]!(...args);
      },
    });
  }
}
