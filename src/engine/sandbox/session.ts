// One simulated account: QR rotation, pairing by QR or code, connect/disconnect/logout, and the control surface of DESIGN §6.
import { randomBytes, randomInt } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors.js';
import type { EventType } from '../../events/catalogue.js';
import type {
  CallRejecter,
  CastVote,
  ConnectionUpdate,
  EngineSession,
  IdentitySource,
  HistoryAnchor,
  MessageRef,
  OutgoingContent,
  SendOptions,
  SentMessage,
  SessionOptions,
  StatusReason,
  TypingState,
} from '../types.js';
import type { ChatOps } from '../types.js';
import { CallBook } from '../calls.js';
import { ContactUpdates } from '../contact-updates.js';
import { identityEventPayload, IdentityPairs } from '../identities.js';
import { jidKind, jidRef, jidUser, userJid, type JidRef } from '../jid.js';
import { logoutReport, type LogoutReason } from '../logouts.js';
import { delegateChatOps, SandboxChats } from './chats.js';
import { SandboxMessenger } from './messenger.js';
import { SendFaults } from './faults.js';
import { DEFAULT_SERVER_ACK_TIMING, ServerAcks, type ServerAckTiming } from '../server-acks.js';
import { SandboxDecryptionFaults } from './decryption-faults.js';
import { DEFAULT_UNDECRYPTABLE_AFTER_SECONDS } from '../decryption.js';
import { MAX_HELD_EVENTS, type HeldEvent, type SandboxNetwork } from './network.js';

export interface SandboxTiming {
  qrRotationSeconds: number;
  qrMaxRotations: number;
  /** how long a send waits for the network's ack, and when its absence fails the message (messages.*) */
  serverAck?: ServerAckTiming;
  /** engine.decryption.undecryptableAfterSeconds */
  undecryptableAfterSeconds?: number;
}

interface SandboxCreds {
  phoneNumber: string;
  pushName: string;
  business: boolean;
  businessName?: string;
}

export interface PairRequest {
  phoneNumber?: string;
  pushName?: string;
  business?: boolean;
  businessName?: string;
  code?: string;
  /** the chat history the phone sends once, right after this first link (history.sync events) */
  history?: SeededHistory;
}

/** A seeded history: `messages` made-up messages across `chats` chats (100 by default). */
export interface SeededHistory {
  messages: number;
  chats?: number;
}

type Phase = 'idle' | 'awaiting-pairing' | 'pairing' | 'open';

/** How long a silence fault lasts: until the next connection (a soft reconnect ends it), or until the session restarts. */
export type SilenceUntil = 'reconnect' | 'restart';

const PAIRING_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';
const CREDS_KEY = 'creds';

/** The ChatOps methods are installed by delegateChatOps (below the class) and forward to `chats`. */
export interface SandboxSession extends ChatOps {}

export class SandboxSession implements EngineSession {
  readonly engine = 'sandbox' as const;
  private phase: Phase = 'idle';
  private qrTimer: NodeJS.Timeout | undefined;
  private qrRotations = 0;
  private pairingCode: { code: string; phoneDigits: string } | undefined;
  /** messaging of this account; exists while the session is open */
  messenger: SandboxMessenger | undefined;
  /** groups, channels, presence, contacts and labels of this account; exists while the session is open */
  chats: SandboxChats | undefined;
  /** the number ↔ LID pairs this account learnt (kept across restarts); the network itself forgets LIDs at a restart */
  private readonly identities: IdentityPairs;
  private readonly contactUpdates = new ContactUpdates();
  /** the calls that reached this account lately (kept across reconnects, like the network's record of them) */
  readonly calls = new CallBook();
  /** the decryption faults the sandbox's fault routes inject */
  readonly decryptionFaults: SandboxDecryptionFaults;
  /** the stored creds (read at connect, written at pairing, gone at logout) */
  private creds: SandboxCreds | undefined;
  /** counts connects and closes: a connect that waited on the store gives way to a later one, or to a stop */
  private attempts = 0;
  /** the network's answers to this account's sends */
  readonly serverAcks: ServerAcks;
  /** the refusals the network plays on this account's next sends (sandbox routes) */
  readonly faults = new SendFaults();
  /**
   * A silence fault: the simulated network sends nothing (keep-alive answers included) while the connection stays open;
   * `since`: when its last frame came; `held`: the events it did not send, sent on the connection that ends the silence
   * (a stop hands them to the network for the account's next session). A restart makes a new session object, so no
   * silence outlives one.
   */
  private silence: { since: number; until: SilenceUntil; held: HeldEvent[] } | undefined;

  constructor(
    private readonly options: SessionOptions,
    private readonly network: SandboxNetwork,
    private readonly timing: SandboxTiming,
  ) {
    this.identities = new IdentityPairs(options.identities, options.knownIdentities);
    this.serverAcks = new ServerAcks(timing.serverAck ?? DEFAULT_SERVER_ACK_TIMING, (type, payload) => this.options.hooks.event(type, payload));
    // a pair learnt for the first time or changed is news to the application
    this.identities.onChange = (change) => this.options.hooks.event('contact.identity', identityEventPayload(change));
    this.decryptionFaults = new SandboxDecryptionFaults((timing.undecryptableAfterSeconds ?? DEFAULT_UNDECRYPTABLE_AFTER_SECONDS) * 1000, {
      signal: (signal) => this.options.hooks.decryption?.(signal),
      deliver: (type, payload) => this.deliver(type, payload),
    });
  }

  get name(): string {
    return this.options.name;
  }

  private async storedCreds(): Promise<SandboxCreds | undefined> {
    const raw = await this.options.auth.get(CREDS_KEY);
    return raw === undefined ? undefined : (JSON.parse(raw) as SandboxCreds);
  }

  async connect(): Promise<void> {
    this.clearQrTimer();
    const attempt = ++this.attempts;
    const creds = await this.storedCreds();
    if (attempt !== this.attempts) return;
    this.creds = creds;
    if (creds) {
      // the network answers a login on the next tick, as a real socket would after its handshake
      setImmediate(() => this.phase !== 'open' && this.open(creds));
      this.phase = 'awaiting-pairing';
      return;
    }
    this.phase = 'awaiting-pairing';
    this.qrRotations = 0;
    this.pairingCode = undefined;
    this.rotateQr();
  }

  async disconnect(): Promise<void> {
    const digits = this.creds?.phoneNumber;
    if (digits && this.silence) this.network.holdOffline(digits, this.silence.held);
    this.silence = undefined;
    this.close();
  }

  async logout(): Promise<void> {
    this.close();
    this.creds = undefined;
    await this.options.auth.clear();
  }

  /** The simulated network answers every keep-alive at once: the last frame is now, unless it went silent. */
  lastFrameAt(): number | undefined {
    if (this.phase !== 'open') return undefined;
    return this.silence ? this.silence.since : Date.now();
  }

  async probe(timeoutMs: number): Promise<void> {
    if (this.phase !== 'open') throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
    if (!this.silence) return;
    await delay(timeoutMs);
    throw new GatewayError('NETWORK_ERROR', `no answer to the probe within ${timeoutMs} ms`);
  }

  async reconnect(): Promise<void> {
    const creds = this.creds;
    if (this.phase !== 'open' || !creds) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
    this.close();
    const attempt = this.attempts;
    // the network answers a login on the next tick, as a real socket would after its handshake
    await new Promise((resolve) => setImmediate(resolve));
    if (attempt !== this.attempts) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} was stopped during its reconnect`);
    this.open(creds);
  }

  /** The silence fault (sandbox route …/faults/silence): from now on the network sends this connection nothing. */
  silenceNetwork(until: SilenceUntil): void {
    if (this.phase !== 'open') throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
    this.silence = { since: Date.now(), until, held: this.silence?.held ?? [] };
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    if (this.phase !== 'awaiting-pairing' || this.creds) {
      throw new GatewayError('QR_NOT_AVAILABLE', 'the session is not waiting for pairing');
    }
    const code = Array.from({ length: 8 }, () => PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)]).join('');
    this.pairingCode = { code, phoneDigits: phoneNumber };
    return code;
  }

  // ---- messaging (delegated to the messenger of the open account) ----

  sendMessage(chatId: string, content: OutgoingContent, options: SendOptions): Promise<SentMessage> {
    return this.open$().send(chatId, content, options);
  }

  async editMessage(target: MessageRef, text: string): Promise<void> {
    this.open$().edit(target, text);
  }

  async deleteMessage(target: MessageRef): Promise<void> {
    this.open$().revoke(target);
  }

  async react(target: MessageRef, emoji: string): Promise<void> {
    this.open$().react(target, emoji);
  }

  async sendTyping(chatId: string, state: TypingState): Promise<void> {
    this.open$().typing(chatId, state);
  }

  async markSeen(target: MessageRef): Promise<void> {
    this.open$().seen(target);
  }

  async star(): Promise<void> {
    this.open$();
  }

  /** Media of a history sync, from the phone that still holds it (the simulated network; gone after a daemon restart). */
  async downloadMedia(ref: unknown): Promise<NodeJS.ReadableStream> {
    this.open$();
    const id = (ref as { phoneMedia?: unknown } | null)?.phoneMedia;
    const data = typeof id === 'string' ? this.network.heldMedia(id) : undefined;
    if (!data) throw new GatewayError('MEDIA_EXPIRED', 'the phone no longer holds this media');
    return Readable.from([data]);
  }

  async votePoll(poll: MessageRef, selectedOptions: string[]): Promise<CastVote> {
    return this.open$().votePoll(poll, selectedOptions);
  }

  async rejectCall(callId: string, by: CallRejecter): Promise<void> {
    this.open$();
    this.chats!.rejectCall(callId, by);
  }

  async requestHistory(anchor: HistoryAnchor, count: number): Promise<{ requestId: string }> {
    return this.open$().requestHistory(anchor, count);
  }

  /** Delivers an event to this account's application (called by the network for other accounts' actions). */
  deliver(type: EventType, payload: Record<string, unknown>): void {
    if (this.phase !== 'open') return;
    if (this.silence) {
      if (this.silence.held.length < MAX_HELD_EVENTS) this.silence.held.push([type, payload]);
      return;
    }
    // a session that opted out of status posts never sees them, as Baileys' ignored JIDs are never decrypted
    if (type === 'message.received' && payload.chatId === 'status@broadcast' && this.options.config.ignoreStatus === true) return;
    this.learnFrom(type, payload);
    // a 1:1 chat is named by the phone JID when the account knows the number behind the LID it was addressed by
    if (typeof payload.chatId === 'string' && jidKind(payload.chatId) === 'lid') {
      const pn = this.identities.pnOf(payload.chatId);
      if (pn) payload.chatId = pn;
    }
    if (type === 'contact.update' && !this.contactUpdates.changes(payload)) return;
    this.options.hooks.event(type, payload);
  }

  /** Records that `digits` and `lid` are the same person, as the account saw them together (`source`: how). */
  learn(digits: string, lid: string, source: IdentitySource = 'message'): void {
    this.identities.set(userJid(digits), lid, source);
  }

  /** Learns the pairs an event names people by (the author, a group member, a caller, a reader). */
  private learnFrom(type: EventType, payload: Record<string, unknown>): void {
    const source: IdentitySource = type.startsWith('group.') ? 'group' : type.startsWith('call.') ? 'call' : type === 'contact.update' ? 'contact' : 'message';
    const refs = [payload.from, payload.sender, payload.voter, payload.by, ...(Array.isArray(payload.participants) ? payload.participants : [])] as Array<JidRef | string | undefined>;
    for (const ref of refs) {
      if (ref && typeof ref === 'object' && ref.phoneNumber && ref.lid) this.learn(ref.phoneNumber.slice(1), ref.lid, source);
    }
    if (type === 'contact.update' && typeof payload.phoneNumber === 'string' && typeof payload.lid === 'string') this.learn(payload.phoneNumber.slice(1), payload.lid, source);
  }

  /** The chat as this account names it: a LID whose number it knows becomes the phone JID. */
  canonicalChat(chatId: string): string {
    return jidKind(chatId) === 'lid' ? (this.identities.pnOf(chatId) ?? chatId) : chatId;
  }

  /** A person the network named by LID only: with the phone number when this account learnt the pair before. */
  personByLid(lid: string): JidRef {
    const pn = this.identities.pnOf(lid);
    return pn ? jidRef(pn, { lid }) : jidRef(lid);
  }

  /** The digits behind a LID this account learnt (the network may not know it any more after a restart). */
  digitsOfLearntLid(lid: string): string | undefined {
    const pn = this.identities.pnOf(lid);
    return pn ? jidUser(pn) : undefined;
  }

  private open$(): SandboxMessenger {
    if (this.phase !== 'open' || !this.messenger) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
    return this.messenger;
  }

  // ---- sandbox controls ----

  /** The simulated phone scans the current QR (or enters the pairing code); settles once the creds are stored. */
  async pair(request: PairRequest): Promise<void> {
    if (this.phase === 'open') throw new GatewayError('SESSION_ALREADY_PAIRED', `session ${this.name} is already paired`);
    if (this.phase !== 'awaiting-pairing' || this.creds) {
      throw new GatewayError('SESSION_NOT_STARTED', `session ${this.name} is not waiting for pairing; start it first`);
    }
    if (request.code !== undefined) {
      const expected = this.pairingCode?.code;
      if (!expected || request.code.replace(/-/g, '').toUpperCase() !== expected) {
        throw new GatewayError('VALIDATION_FAILED', 'the pairing code does not match the one the session requested', [
          { path: '/code', message: 'does not match' },
        ]);
      }
    }
    const phoneDigits = request.phoneNumber ?? this.pairingCode?.phoneDigits ?? `1555${randomInt(1_000_000, 9_999_999)}`;
    if (this.pairingCode && request.phoneNumber && request.phoneNumber !== this.pairingCode.phoneDigits) {
      throw new GatewayError('VALIDATION_FAILED', 'the pairing code was requested for another phone number', [
        { path: '/phoneNumber', message: 'differs from the number the code was requested for' },
      ]);
    }
    const creds: SandboxCreds = {
      phoneNumber: phoneDigits,
      pushName: request.pushName ?? `Sandbox ${phoneDigits.slice(-4)}`,
      business: request.business ?? false,
      ...(request.business ? { businessName: request.businessName ?? request.pushName ?? `Business ${phoneDigits.slice(-4)}` } : {}),
    };
    // no second pairing while the creds are written
    this.phase = 'pairing';
    const attempt = this.attempts;
    try {
      await this.options.auth.set({ [CREDS_KEY]: JSON.stringify(creds) });
    } catch (err) {
      if (attempt === this.attempts && this.phase === 'pairing') this.phase = 'awaiting-pairing';
      throw err;
    }
    // stopped meanwhile: the creds are kept, as a scan just before a stop would have
    if (attempt !== this.attempts) return;
    this.creds = creds;
    this.open(creds);
    // only a new link sends history: reconnects and restarts log in with the stored creds (connect → open) and send none
    if (request.history) this.sendSeededHistory(request.history);
  }

  /** The network drops the session with a chosen reason. */
  async drop(reason: Exclude<StatusReason, 'SCAN_QR' | 'MANUAL_STOP'>): Promise<void> {
    if (this.phase === 'idle') throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not running`);
    this.close();
    if (reason === 'LOGGED_OUT') {
      this.creds = undefined;
      await this.options.auth.clear();
      this.report({ kind: 'close', reason, credentialsCleared: true, detail: 'unlinked from the phone' });
      return;
    }
    this.report({ kind: 'close', reason, detail: 'dropped by the sandbox network' });
  }

  /** The network logs the session out for a classified reason (docs/ENGINES.md, forced logouts). */
  async logOut(reason: LogoutReason): Promise<void> {
    if (this.phase === 'idle') throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not running`);
    this.close();
    const report = logoutReport(reason, `logged out by the sandbox network (${reason})`);
    if (report.credentialsCleared) {
      this.creds = undefined;
      await this.options.auth.clear();
    }
    this.report(report);
  }

  get phoneDigits(): string | undefined {
    return this.phase === 'open' ? this.creds?.phoneNumber : undefined;
  }

  // ---- internals ----

  /** The phone sends the seeded history just after linking (after the pair call answered), as the real one does. */
  private sendSeededHistory(history: SeededHistory): void {
    const messenger = this.messenger;
    setImmediate(() => {
      // the link was dropped (or dropped and re-established) in between: that history is gone with it
      if (!messenger || this.messenger !== messenger) return;
      messenger.syncHistory(history.messages, history.chats ?? 100).catch(() => {});
    });
  }

  private open(creds: SandboxCreds): void {
    this.clearQrTimer();
    this.phase = 'open';
    // a new connection ends a silence that lasts until one; one that outlives it starts again after the login's frames
    let held: HeldEvent[] = this.network.takeOffline(creds.phoneNumber);
    if (this.silence?.until === 'reconnect') {
      held = [...held, ...this.silence.held];
      this.silence = undefined;
    } else if (this.silence) this.silence.since = Date.now();
    this.network.attach(creds.phoneNumber, this);
    this.messenger = new SandboxMessenger(this.network, creds.phoneNumber, this);
    this.chats = new SandboxChats(this.network, creds.phoneNumber, this, { pushName: creds.pushName, business: creds.business, ...(creds.businessName ? { businessName: creds.businessName } : {}) });
    this.report({
      kind: 'open',
      account: {
        phoneNumber: `+${creds.phoneNumber}`,
        pushName: creds.pushName,
        ...(creds.businessName ? { businessName: creds.businessName } : {}),
        platform: creds.business ? 'smba' : 'consumer',
        lid: this.network.lidOf(creds.phoneNumber),
      },
    });
    // what the network held while the account was deaf comes after the login, as WhatsApp's offline queue does
    for (const [type, payload] of held) this.deliver(type, payload);
  }

  private close(): void {
    this.attempts += 1;
    this.clearQrTimer();
    const digits = this.creds?.phoneNumber;
    if (digits) this.network.detach(digits, this);
    this.messenger = undefined;
    this.chats = undefined;
    this.decryptionFaults.close();
    this.phase = 'idle';
    this.pairingCode = undefined;
  }

  private rotateQr(): void {
    if (this.qrRotations >= this.timing.qrMaxRotations) {
      this.close();
      this.report({ kind: 'close', reason: 'QR_TIMEOUT', detail: `no scan after ${this.timing.qrMaxRotations} QR codes` });
      return;
    }
    this.qrRotations += 1;
    const ttlMs = this.timing.qrRotationSeconds * 1000;
    const qr = `sandbox:${this.name}:${randomBytes(12).toString('base64url')}`;
    this.report({ kind: 'qr', qr, expiresAt: new Date(Date.now() + ttlMs).toISOString() });
    this.qrTimer = setTimeout(() => this.rotateQr(), ttlMs);
    this.qrTimer.unref();
  }

  private clearQrTimer(): void {
    if (this.qrTimer) clearTimeout(this.qrTimer);
    this.qrTimer = undefined;
  }

  private report(update: ConnectionUpdate): void {
    this.options.hooks.connection(update);
  }
}

delegateChatOps(SandboxSession.prototype);
