// What the sandbox network keeps per phone number besides groups (profile, presence, blocklist, labels, address book, presence subscriptions), and channels.
import { GatewayError } from '../../errors.js';
import type { EventType } from '../../events/catalogue.js';
import { jidKind, jidRef, jidUser, userJid, type JidRef } from '../jid.js';
import type { LabelInfo } from '../types.js';
import type { SandboxChatState } from './chat-state.js';
import { isRegisteredNumber, type SandboxNetwork } from './network.js';

/** What every account sees of a number: names, picture and presence. */
export interface SandboxProfile {
  pushName?: string;
  businessName?: string;
  pictureUrl?: string;
  pictureHidden: boolean;
  /** last presence the number showed; lastSeen in Unix seconds */
  presence?: { presence: 'available' | 'unavailable'; lastSeen?: number };
}

/** What only the account itself has. */
export interface SandboxAccountState {
  business: boolean;
  blocked: Set<string>;
  labels: Map<string, LabelInfo>;
  /** label id → chat JIDs */
  labelChats: Map<string, Set<string>>;
  /** numbers whose presence the account subscribed to */
  subscriptions: Set<string>;
  /** address book: number → saved name */
  savedNames: Map<string, string>;
  /** the account's chat list state (app state), by chat JID */
  chatStates: Map<string, SandboxChatState>;
}

export interface SandboxChannel {
  id: string;
  name: string;
  description: string;
  pictureUrl?: string;
  ownerDigits: string;
  followers: Set<string>;
  muted: Set<string>;
  createdAt: number;
}

export function profileOf(network: SandboxNetwork, digits: string): SandboxProfile {
  let profile = network.profiles.get(digits);
  if (!profile) network.profiles.set(digits, (profile = { pictureHidden: false }));
  return profile;
}

export function accountOf(network: SandboxNetwork, digits: string): SandboxAccountState {
  let account = network.accounts.get(digits);
  if (!account) {
    account = { business: false, blocked: new Set(), labels: new Map(), labelChats: new Map(), subscriptions: new Set(), savedNames: new Map(), chatStates: new Map() };
    network.accounts.set(digits, account);
  }
  return account;
}

export function refOf(network: SandboxNetwork, digits: string): JidRef {
  return jidRef(userJid(digits), { lid: network.lidOf(digits) });
}

/** The phone digits behind a user JID or a LID the network handed out; undefined otherwise. */
export function digitsOf(network: SandboxNetwork, jid: string): string | undefined {
  const kind = jidKind(jid);
  if (kind === 'user') return jidUser(jid);
  if (kind === 'lid') return network.digitsOfLid(`${jidUser(jid)}@lid`);
  return undefined;
}

/** The digits of a registered number, or CONTACT_NOT_FOUND. */
export function registeredDigits(network: SandboxNetwork, jid: string): string {
  const digits = digitsOf(network, jid);
  if (!digits || !isRegisteredNumber(digits)) throw new GatewayError('CONTACT_NOT_FOUND', `${jid} is not on the network`);
  return digits;
}

/** Hands an event to the app of every listed number that has an open sandbox session. */
export function deliverTo(network: SandboxNetwork, digits: Iterable<string>, type: EventType, payload: Record<string, unknown>): void {
  for (const d of digits) network.sessionFor(d)?.deliver(type, { ...payload });
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
