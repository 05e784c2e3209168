// Presence on the sandbox network: own availability, subscriptions, and presence.update to subscribers (chat states go to the chat).
import { GatewayError } from '../../errors.js';
import { jidRef, type JidRef } from '../jid.js';
import type { ChatOps } from '../types.js';
import { accountOf, nowSeconds, profileOf, refOf, registeredDigits } from './accounts.js';
import type { SandboxNetwork } from './network.js';
import type { SandboxSession } from './session.js';

export type PresenceOpName = 'setPresence' | 'subscribePresence';
export type PresenceValue = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';

/** The presence.update payload (docs/EVENTS.md): `state` and `unavailable` as SPEC §6, `presence` the finer value. */
export function presencePayload(from: JidRef, presence: PresenceValue, lastSeen?: number, sender?: JidRef): Record<string, unknown> {
  return {
    from,
    ...(sender ? { sender } : {}),
    presence: presence === 'paused' ? 'available' : presence,
    state: presence === 'composing' || presence === 'recording' ? 'composing' : 'paused',
    unavailable: presence === 'unavailable',
    ...(lastSeen !== undefined ? { lastSeen } : {}),
    ...(presence === 'recording' ? { media: 'audio' } : {}),
  };
}

/** The presence operations of one account. */
export class SandboxPresence implements Pick<ChatOps, PresenceOpName> {
  constructor(
    private readonly network: SandboxNetwork,
    private readonly me: string,
    private readonly session: SandboxSession,
  ) {}

  async setPresence(presence: 'available' | 'unavailable'): Promise<void> {
    this.announce(this.me, presence, presence === 'unavailable' ? nowSeconds() : undefined);
  }

  async subscribePresence(jid: string): Promise<void> {
    const digits = registeredDigits(this.network, jid);
    accountOf(this.network, this.me).subscriptions.add(digits);
    // the network answers a subscription with the contact's current presence, when it has one
    const known = profileOf(this.network, digits).presence;
    if (known) this.session.deliver('presence.update', presencePayload(refOf(this.network, digits), known.presence, known.lastSeen));
  }

  /**
   * Sandbox control: a number's presence changes. Availability goes to every account subscribed to it; a chat
   * state (composing, recording, paused) goes to this session's chat with it, or to the group `groupId`.
   * Returns whether this session was told.
   */
  contactPresence(from: string, presence: PresenceValue, lastSeen?: number, groupId?: string): boolean {
    if (presence === 'available' || presence === 'unavailable') {
      this.announce(from, presence, presence === 'unavailable' ? (lastSeen ?? nowSeconds()) : lastSeen);
      return accountOf(this.network, this.me).subscriptions.has(from);
    }
    if (groupId && !this.network.groups.get(groupId)?.members.has(this.me)) {
      throw new GatewayError('GROUP_NOT_FOUND', `the session is not in a group ${groupId}`);
    }
    const sender = refOf(this.network, from);
    this.session.deliver('presence.update', groupId ? presencePayload(jidRef(groupId), presence, undefined, sender) : presencePayload(sender, presence));
    return true;
  }

  private announce(digits: string, presence: 'available' | 'unavailable', lastSeen: number | undefined): void {
    profileOf(this.network, digits).presence = { presence, ...(lastSeen !== undefined ? { lastSeen } : {}) };
    const payload = presencePayload(refOf(this.network, digits), presence, lastSeen);
    for (const [subscriber, account] of this.network.accounts) {
      if (subscriber !== digits && account.subscriptions.has(digits)) this.network.sessionFor(subscriber)?.deliver('presence.update', { ...payload });
    }
  }
}
