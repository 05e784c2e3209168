// The simulated network shared by every sandbox session of one daemon: accounts online, LIDs, groups, and messages in transit.
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { EventType } from '../../events/catalogue.js';
import type { SandboxAccountState, SandboxChannel, SandboxProfile } from './accounts.js';
import type { SandboxSession } from './session.js';

/** An event the network holds for an account while its connection is silent (the silence fault). */
export type HeldEvent = [EventType, Record<string, unknown>];
/** the most events held for one account: the rest of a long silence is lost, as a full offline queue would be */
export const MAX_HELD_EVENTS = 10_000;

/** Numbers starting with +999 are never registered; every other plausible number is a virtual contact. */
export function isRegisteredNumber(digits: string): boolean {
  return /^[1-9]\d{6,14}$/.test(digits) && !digits.startsWith('999');
}

/** A stable linked-device id for a phone number, as the real network assigns one per account. */
export function lidFor(digits: string): string {
  const hash = createHash('sha256').update(`lid:${digits}`).digest();
  return `${(hash.readBigUInt64BE(0) % 900_000_000_000_000n) + 100_000_000_000_000n}@lid`;
}

export interface GroupMember {
  admin: boolean;
  superAdmin: boolean;
}

export interface SandboxGroup {
  id: string;
  subject: string;
  description: string;
  ownerDigits: string;
  createdAt: number;
  inviteCode: string;
  members: Map<string, GroupMember>;
  picture?: string;
}

/** What the network remembers of a message: who sent it where, and to whom it went. */
export interface MessageTrace {
  id: string;
  senderDigits: string;
  /** the chat as the sender addressed it */
  chatId: string;
  groupId?: string;
  recipients: string[];
  addressedByLid: boolean;
  poll?: { options: string[]; multiSelect: boolean };
}

/** What the network knows of a call between two numbers, as the caller's phone shows it. */
export interface SandboxCallTrace {
  callId: string;
  callerDigits: string;
  calleeDigits: string;
  isVideo: boolean;
  /** ISO 8601 */
  offeredAt: string;
  /** as the caller's phone shows the call: ringing, answered, declined (a reject reached it) or unanswered */
  callerSaw: 'ringing' | 'accepted' | 'rejected' | 'missed';
}

const MAX_CALL_TRACES = 10_000;
/** A message of a chat the phone holds from before what it synced: served on a history request (requestHistory). */
export interface OlderMessage {
  id: string;
  fromMe: boolean;
  /** the author's digits in a group (a 1:1 chat's author is the other person) */
  authorDigits?: string;
  text: string;
  /** ms */
  timestamp: number;
}

const MAX_TRACES = 200_000;
/** chats whose older messages the simulated phones keep, and messages kept per chat */
export const MAX_OLDER_CHATS = 1_000;
export const MAX_OLDER_PER_CHAT = 1_000;
/** media of history syncs the simulated phones keep for download */
const MAX_PHONE_MEDIA = 1_000;

export class SandboxNetwork {
  private readonly online = new Map<string, SandboxSession>();
  private readonly lidToDigits = new Map<string, string>();
  private readonly digitsToLid = new Map<string, string>();
  private readonly traces = new Map<string, MessageTrace>();
  private readonly phoneMedia = new Map<string, Buffer>();
  /** by callee digits and call id */
  private readonly calls = new Map<string, SandboxCallTrace>();
  /** by account digits and chat: oldest first */
  private readonly older = new Map<string, OlderMessage[]>();
  readonly groups = new Map<string, SandboxGroup>();
  readonly channels = new Map<string, SandboxChannel>();
  /** by phone digits */
  readonly profiles = new Map<string, SandboxProfile>();
  /** by phone digits */
  readonly accounts = new Map<string, SandboxAccountState>();

  /** what a silent connection of an account held when its session stopped: sent on the account's next connection */
  private readonly offline = new Map<string, HeldEvent[]>();

  holdOffline(digits: string, events: HeldEvent[]): void {
    if (events.length) this.offline.set(digits, [...(this.offline.get(digits) ?? []), ...events].slice(0, MAX_HELD_EVENTS));
  }

  takeOffline(digits: string): HeldEvent[] {
    const events = this.offline.get(digits) ?? [];
    this.offline.delete(digits);
    return events;
  }

  /** @param wireLog a file every message the network carries is appended to (tests count sends per id, across crashes) */
  constructor(private readonly wireLog?: string) {}

  /**
   * A message reached the network: written to the wire log (one JSON line, synchronously) when there is one. A second
   * send under an id is a second line: nothing here merges them (the test of the send queue counts them).
   */
  wire(senderDigits: string, messageId: string, chatId: string): void {
    if (this.wireLog) appendFileSync(this.wireLog, `${JSON.stringify({ sender: senderDigits, messageId, chatId, at: Date.now() })}\n`);
  }

  attach(digits: string, session: SandboxSession): void {
    this.online.set(digits, session);
    this.lidOf(digits);
  }

  detach(digits: string, session: SandboxSession): void {
    if (this.online.get(digits) === session) this.online.delete(digits);
  }

  sessionFor(digits: string): SandboxSession | undefined {
    return this.online.get(digits);
  }

  lidOf(digits: string): string {
    let lid = this.digitsToLid.get(digits);
    if (!lid) {
      lid = lidFor(digits);
      this.digitsToLid.set(digits, lid);
      this.lidToDigits.set(lid, digits);
    }
    return lid;
  }

  digitsOfLid(lid: string): string | undefined {
    return this.lidToDigits.get(lid);
  }

  remember(trace: MessageTrace): void {
    this.traces.set(trace.id, trace);
    if (this.traces.size > MAX_TRACES) this.traces.delete(this.traces.keys().next().value!);
  }

  trace(id: string): MessageTrace | undefined {
    return this.traces.get(id);
  }

  placeCall(call: SandboxCallTrace): void {
    this.calls.set(`${call.calleeDigits} ${call.callId}`, call);
    if (this.calls.size > MAX_CALL_TRACES) this.calls.delete(this.calls.keys().next().value!);
  }

  /** The call ended as its caller sees it (a reject is carried to the caller's phone). */
  callEnded(calleeDigits: string, callId: string, seen: SandboxCallTrace['callerSaw']): void {
    const call = this.calls.get(`${calleeDigits} ${callId}`);
    if (call) call.callerSaw = seen;
  }

  /** A call placed to the account `calleeDigits` (call ids are the caller's: two accounts may see the same one). */
  call(calleeDigits: string, callId: string): SandboxCallTrace | undefined {
    return this.calls.get(`${calleeDigits} ${callId}`);
  }

  holdMedia(messageId: string, data: Buffer): void {
    this.phoneMedia.set(messageId, data);
    if (this.phoneMedia.size > MAX_PHONE_MEDIA) this.phoneMedia.delete(this.phoneMedia.keys().next().value!);
  }

  /** The phone of `digits` holds `messages` of `chatId` (added to those it has; the newest MAX_OLDER_PER_CHAT kept). */
  holdOlder(digits: string, chatId: string, messages: OlderMessage[]): void {
    const key = `${digits}\u0000${chatId}`;
    const byId = new Map((this.older.get(key) ?? []).map((m) => [m.id, m]));
    for (const message of messages) byId.set(message.id, message);
    const kept = [...byId.values()].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1)).slice(-MAX_OLDER_PER_CHAT);
    this.older.delete(key);
    this.older.set(key, kept);
    if (this.older.size > MAX_OLDER_CHATS) this.older.delete(this.older.keys().next().value!);
  }

  /** The newest `count` messages of `chatId` the phone of `digits` holds from before `before` (ms), oldest first. */
  olderThan(digits: string, chatId: string, before: number, count: number): OlderMessage[] {
    const held = this.older.get(`${digits}\u0000${chatId}`) ?? [];
    const earlier = held.filter((m) => m.timestamp < before);
    return earlier.slice(Math.max(0, earlier.length - count));
  }

  heldMedia(messageId: string): Buffer | undefined {
    return this.phoneMedia.get(messageId);
  }
}
