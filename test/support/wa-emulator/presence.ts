// Presence (available/unavailable, subscriptions) and chat state (composing/recording/paused); never queued for offline devices.
import { jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import { unixNow, type Hub } from './hub.js';
import type { Groups } from './groups.js';
import type { Account } from './registry.js';

export type ChatState = 'composing' | 'recording' | 'paused';

export class Presence {
  /** target account → subscribed connection → the jid form it subscribed with */
  private readonly subscribers = new Map<Account, Map<Connection, string>>();

  constructor(
    private readonly hub: Hub,
    private readonly groups: Groups,
  ) {}

  /** `<presence>` from a companion: subscribe, or declare available/unavailable (with the push name). */
  handle(connection: Connection, node: BinaryNode): void {
    const account = connection.device?.account;
    if (!account) return;
    if (node.attrs.name) account.pushName = node.attrs.name;
    if (node.attrs.type === 'subscribe' && node.attrs.to) {
      const target = this.hub.registry.account(node.attrs.to);
      if (!target) return;
      const subs = this.subscribers.get(target) ?? new Map<Connection, string>();
      subs.set(connection, node.attrs.to);
      this.subscribers.set(target, subs);
      connection.send(this.presenceNode(target, node.attrs.to));
      return;
    }
    if (node.attrs.type === 'available' || node.attrs.type === 'unavailable') this.set(account, node.attrs.type);
  }

  /** Sets an account's presence and tells every subscriber. */
  set(account: Account, type: 'available' | 'unavailable'): void {
    account.presence = type;
    if (type === 'unavailable') account.lastSeen = Math.floor(Date.now() / 1000);
    for (const [subscriber, askedAs] of this.subscribers.get(account) ?? []) {
      if (subscriber.open) subscriber.send(this.presenceNode(account, askedAs));
      else this.subscribers.get(account)?.delete(subscriber);
    }
  }

  /** `<chatstate>` from a companion. */
  handleChatState(connection: Connection, node: BinaryNode): void {
    const account = connection.device?.account;
    const state = Array.isArray(node.content) ? node.content[0] : undefined;
    if (!account || !state || !node.attrs.to) return;
    this.sendChatState(account, node.attrs.to, state, connection);
  }

  /** Forwards a chat state of `from` to the companions of `to` (a user or a group). */
  sendChatState(from: Account, to: string, state: BinaryNode, except?: Connection): void {
    const group = jidDecode(to)?.server === 'g.us' ? this.groups.get(to) : undefined;
    if (group) {
      for (const member of this.groups.members(group)) {
        for (const device of this.hub.registry.companions(member)) {
          const connection = this.hub.online.get(device.jid);
          if (connection?.active && connection !== except) {
            connection.send({ tag: 'chatstate', attrs: { from: group.jid, participant: this.groups.jidOf(group, from) }, content: [state] });
          }
        }
      }
      return;
    }
    const target = this.hub.registry.account(to);
    if (!target) return;
    const mode = jidDecode(to)?.server === 'lid' ? 'lid' : 'pn';
    for (const device of this.hub.registry.companions(target)) {
      const connection = this.hub.online.get(device.jid);
      if (connection?.active && connection !== except) {
        connection.send({ tag: 'chatstate', attrs: { from: this.hub.registry.userJid(from, mode) }, content: [state] });
      }
    }
  }

  forget(connection: Connection): void {
    for (const subs of this.subscribers.values()) subs.delete(connection);
  }

  private presenceNode(target: Account, askedAs: string): BinaryNode {
    const attrs: Record<string, string> = { from: askedAs, type: target.presence };
    if (target.presence === 'unavailable') attrs.last = target.lastSeen ? String(target.lastSeen) : 'deny';
    return { tag: 'presence', attrs: { ...attrs, t: unixNow() } };
  }
}
