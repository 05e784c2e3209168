// A sandbox account's chat list state (archived, pinned, muted, read), as WhatsApp keeps it in the app state every device
// of the account shares: a change is kept on the network and reported to the session as the chat.* event it causes.
import type { ChatOps, ChatStateChange } from '../types.js';
import { accountOf } from './accounts.js';
import type { SandboxNetwork } from './network.js';
import type { SandboxSession } from './session.js';

export type ChatStateOpName = 'changeChat';

/** One chat's state on the network (ms times; muteUntil -1: for good). */
export interface SandboxChatState {
  archived: boolean;
  pinnedAt: number | null;
  muteUntil: number | null;
  read: boolean;
}

export class SandboxChatStates implements Pick<ChatOps, ChatStateOpName> {
  constructor(
    private readonly network: SandboxNetwork,
    private readonly me: string,
    private readonly session: SandboxSession,
  ) {}

  async changeChat(chatId: string, change: ChatStateChange): Promise<void> {
    const chats = accountOf(this.network, this.me).chatStates;
    const state = chats.get(chatId) ?? { archived: false, pinnedAt: null, muteUntil: null, read: true };
    chats.set(chatId, state);
    const timestamp = new Date().toISOString();
    switch (change.action) {
      case 'archive':
      case 'unarchive':
        state.archived = change.action === 'archive';
        this.session.deliver('chat.archive', { chatId, archived: state.archived, timestamp });
        return;
      case 'pin':
      case 'unpin':
        state.pinnedAt = change.action === 'pin' ? Date.parse(timestamp) : null;
        this.session.deliver('chat.pin', { chatId, pinned: state.pinnedAt !== null, timestamp });
        return;
      case 'mute':
        state.muteUntil = change.until;
        this.session.deliver('chat.mute', { chatId, muted: true, muteEndTime: change.until === -1 ? null : new Date(change.until).toISOString(), timestamp });
        return;
      case 'unmute':
        state.muteUntil = null;
        this.session.deliver('chat.mute', { chatId, muted: false, muteEndTime: null, timestamp });
        return;
      case 'read':
      case 'unread':
        state.read = change.action === 'read';
        this.session.deliver('chat.read', { chatId, read: state.read, timestamp });
        return;
    }
  }
}
