// The chat operations (groups, channels, presence, contacts, labels) of one open sandbox account, and how SandboxSession exposes them.
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { userJid } from '../jid.js';
import type { ChatOps } from '../types.js';
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

export type CallOutcome = 'received' | 'missed' | 'accepted' | 'rejected';
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

  /** Sandbox control: a call from `from` reaches the session; returns the call id (reuse it to report the call's end). */
  call(from: string, outcome: CallOutcome, options: { callId?: string; isVideo?: boolean } = {}): string {
    const callId = options.callId ?? randomBytes(16).toString('hex').toUpperCase();
    this.session.deliver(`call.${outcome}`, {
      callId,
      from: refOf(this.network, from),
      chatId: userJid(from),
      isVideo: options.isVideo ?? false,
      isGroup: false,
      timestamp: new Date().toISOString(),
    });
    return callId;
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
