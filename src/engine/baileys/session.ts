// One Baileys session: the socket's lifecycle (QR, pairing code, open, close codes, 515 restarts), and the parts that do the work.
import makeWASocket, {
  DisconnectReason,
  isWABusinessPlatform,
  makeCacheableSignalKeyStore,
  normalizeMessageContent,
  proto,
  S_WHATSAPP_NET,
  type BaileysEventMap,
  type BinaryNode,
  type ConnectionState,
  type GroupMetadata,
  type SignalKeyStore,
  type WASocket,
} from '@whiskeysockets/baileys';
import { GatewayError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { AccountInfo, CallRejecter, CastVote, ChatOps, HistoryAnchor, ConnectionUpdate, EngineSession, MessageRef, OutgoingContent, SendOptions, SentMessage, SessionOptions, TypingState } from '../types.js';
import { loadAuthState, type SqliteAuthState } from './auth-state.js';
import { sessionCaches, TtlCache, type SessionCaches } from './cache.js';
import { BaileysChats } from './chats.js';
import { classifyClose, closeStatusCode } from './close-codes.js';
import { ConfirmationGate } from './commit-gate.js';
import { fromRaw } from './content.js';
import { deferred, QUERY_TIMEOUT_MS, timeout, type Deferred, type SessionContext } from './context.js';
import { EventMapper } from './events.js';
import { withSharedAsyncStorage } from './async-storage.js';
import { BaileysGroups } from './groups.js';
import { bare, Identities } from './identities.js';
import { identityEventPayload, IdentityPairs } from '../identities.js';
import { bridgeLogger } from './logger.js';
import { BaileysMedia } from './media.js';
import type { MediaDownloadSettings } from './media-download.js';
import { PollVotes } from './polls.js';
import { proxyRoute, type ProxyRoute } from './proxy.js';
import { BaileysMessenger } from './send.js';
import { DEFAULT_SERVER_ACK_TIMING, ServerAcks, type ServerAckTiming } from '../server-acks.js';
import { BaileysDecryptionHealth } from './decryption.js';
import { DEFAULT_UNDECRYPTABLE_AFTER_SECONDS } from '../decryption.js';

export interface BaileysSettings {
  websocketUrl?: string;
  browser: [string, string, string];
  logger: Logger;
  /** the level Baileys logs at (see logger.ts) */
  baileysLogLevel: string;
  /** media hosts, deadline and byte cap of CDN downloads */
  mediaDownload?: MediaDownloadSettings;
  /** how long each QR code lives (Baileys' `qrTimeout`) and how many are shown before QR_TIMEOUT (sessions.qr*) */
  qr: { rotationSeconds: number; maxRotations: number };
  /** how long a send waits for the server's ack, and when its absence fails the message (messages.*; defaults when absent) */
  serverAck?: ServerAckTiming;
  /** engine.decryption.undecryptableAfterSeconds, in ms */
  undecryptableAfterMs?: number;
  /**
   * How often an open socket pings the server (sessions.health.keepAliveSeconds). With `watchdog` (the session health
   * watchdog runs), the engine pings and never ends a silent socket itself: the watchdog decides (probe, reconnect,
   * restart). Without it, Baileys' own keep-alive ends a socket silent for an interval and 5 s.
   */
  keepAlive?: { intervalSeconds: number; watchdog: boolean };
}

const DEFAULT_KEEP_ALIVE = { intervalSeconds: 30, watchdog: false };
/** the longest timer Node.js keeps: Baileys' own keep-alive (and its end of a silent socket) then never runs */
const NEVER_MS = 2 ** 31 - 1;

/** how long an operation waits for a reconnect the engine does by itself (515) */
const RESTART_WAIT_MS = 15_000;
/** 515s in a row (within RESTART_WINDOW_MS) before the engine stops restarting by itself */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

type Phase = 'idle' | 'connecting' | 'open';

/** Baileys' nack of a message whose Signal message key is spent (NACK_REASONS.ParsingError, 'Key used already or never filled') */
const SPENT_KEYS_NACK = '487';

/** The ChatOps methods are installed by delegateChatOps (below the class). */
export interface BaileysSession extends ChatOps {}

export class BaileysSession implements EngineSession {
  readonly engine = 'baileys' as const;
  private sock: WASocket | undefined;
  private phase: Phase = 'idle';
  private auth: { state: SqliteAuthState; keys: SignalKeyStore } | undefined;
  /** the socket is being replaced after a 515: operations wait for it instead of failing */
  private restarting = false;
  private restarts: number[] = [];
  private qrCount = 0;
  /** the current socket got pair-success: the server's next close is the restart that logs in with the new creds */
  private pairedOnSocket = false;
  private registration: Deferred<WASocket> = deferred();
  private openWaiters = new Set<Deferred<WASocket>>();
  private events: Promise<void> = Promise.resolve();
  /** holds the current socket's confirmations until what they confirm is committed */
  private gate: ConfirmationGate | undefined;
  /** the in-memory Signal state ran ahead of a store that failed: the next connect reads the store again */
  private keysStale = false;
  /** errors the store threw at a lookup: event mapping that failed on one must not confirm (a mapping bug still does) */
  private readonly storeReadFailures = new WeakSet<object>();
  /** counts connects and disconnects: a connect that waited on the store gives way to a later one, or to a stop */
  private attempts = 0;
  /** when the current socket last received a frame (ms since the epoch) */
  private lastFrame: number | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;

  private readonly log: Logger;
  private readonly baileysLog;
  private readonly caches: SessionCaches = sessionCaches();
  private route: ProxyRoute | undefined;
  private readonly ctx: SessionContext;
  readonly messenger: BaileysMessenger;
  readonly groups: BaileysGroups;
  readonly chats: BaileysChats;
  readonly media: BaileysMedia;
  private readonly mapper: EventMapper;
  private readonly decryption: BaileysDecryptionHealth;

  constructor(
    private readonly options: SessionOptions,
    private readonly settings: BaileysSettings,
  ) {
    this.log = settings.logger.child({ session: options.name });
    this.baileysLog = bridgeLogger(settings.logger, { session: options.name }, settings.baileysLogLevel, (msg, fields, level) => {
      this.decryption.noticeLog(msg, fields);
      if (level !== 'debug') return;
      this.gate?.noticeLog(msg, fields);
      this.noticeSpentRedelivery(msg, fields);
    });
    const groups = new Map<string, GroupMetadata>();
    const pairs = new IdentityPairs(options.identities, options.knownIdentities, (err) => this.log.debug({ err }, 'identity pairs not stored'));
    // a pair learnt for the first time or changed (the account's own excepted) is news to the application
    pairs.onChange = (change) => {
      if (change.pn === this.ctx.me().pn) return;
      options.hooks.event('contact.identity', identityEventPayload(change));
    };
    this.ctx = {
      name: options.name,
      hooks: options.hooks,
      logger: this.log,
      ids: new Identities(pairs),
      groups,
      ownSends: new TtlCache(15 * 60_000, 50_000),
      sendsInFlight: new Map(),
      // a late answer is reported behind the events being mapped, in order with the receipts
      serverAcks: new ServerAcks(settings.serverAck ?? DEFAULT_SERVER_ACK_TIMING, (type, payload) => {
        this.events = this.events.then(() => options.hooks.event(type, payload)).catch((err: unknown) => this.log.error({ err, type }, 'reporting a server ack failed'));
      }),
      historyRequests: new TtlCache(10 * 60_000, 100),
      dispatcher: undefined,
      ready: () => this.ready(),
      current: () => (this.phase === 'open' ? this.sock : undefined),
      lookupMessage: async (id, chatId) => {
        try {
          return await options.lookupMessage?.(id, chatId);
        } catch (err) {
          if (err !== null && typeof err === 'object') this.storeReadFailures.add(err);
          throw err;
        }
      },
      me: () => ({ pn: bare(this.auth?.state.creds.me?.id), lid: bare(this.auth?.state.creds.me?.lid) }),
      isBusiness: () => isWABusinessPlatform(this.auth?.state.creds.platform ?? ''),
    };
    Object.defineProperty(this.ctx, 'dispatcher', { get: () => this.route?.dispatcher });
    const polls = new PollVotes(this.ctx);
    this.mapper = new EventMapper(this.ctx, polls);
    this.messenger = new BaileysMessenger(this.ctx);
    this.groups = new BaileysGroups(this.ctx, (id) => this.mapper.pendingJoins.add(id));
    this.chats = new BaileysChats(this.ctx);
    this.media = new BaileysMedia(this.ctx, settings.mediaDownload);
    this.decryption = new BaileysDecryptionHealth(this.ctx, {
      giveUpMs: settings.undecryptableAfterMs ?? DEFAULT_UNDECRYPTABLE_AFTER_SECONDS * 1000,
      chatOf: (key) => this.mapper.chatOf(key),
      authorOf: (key) => this.mapper.authorOf(key),
      isStored: (id) => this.isStored(id),
    });
  }

  get name(): string {
    return this.options.name;
  }

  // ---- lifecycle ----

  async connect(): Promise<void> {
    const attempt = ++this.attempts;
    await this.endSocket();
    if (!this.auth || !this.auth.state.isPaired() || this.keysStale) {
      const auth = await this.freshAuth();
      if (attempt !== this.attempts) return;
      this.auth = auth;
    }
    if (attempt !== this.attempts) return;
    this.keysStale = false;
    this.restarts = [];
    this.openSocket();
  }

  async disconnect(): Promise<void> {
    this.attempts += 1;
    this.decryption.close();
    await this.endSocket();
    this.failWaiters('the session was stopped');
    await this.closeRoute();
  }

  /** Unlinks the device (remove-companion-device) when the socket is open; the credentials go either way. */
  async logout(): Promise<void> {
    this.attempts += 1;
    this.decryption.close();
    const open = this.phase === 'open';
    const sock = this.detach();
    if (sock && !open) await sock.end(undefined).catch(() => undefined);
    if (sock && open) {
      try {
        await sock.logout();
      } catch (err) {
        this.log.warn({ err }, 'logout request failed; forgetting the credentials locally');
        await sock.end(undefined).catch(() => undefined);
      }
    }
    this.auth = undefined;
    this.failWaiters('the session logged out');
    await this.options.auth.clear();
    await this.closeRoute();
  }

  /**
   * The code appears on the phone under "Link with phone number". Baileys can ask for it only once the socket is
   * registered (its first QR); it writes creds.me early, which is why an unpaired restart starts from fresh creds.
   */
  lastFrameAt(): number | undefined {
    return this.phase === 'open' ? this.lastFrame : undefined;
  }

  async probe(timeoutMs: number): Promise<void> {
    const sock = this.phase === 'open' ? this.sock : undefined;
    if (!sock) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
    await ping(sock, timeoutMs);
  }

  /** A new socket with the same creds; operations wait for it meanwhile, as they do during a 515 restart. */
  async reconnect(): Promise<void> {
    if (this.phase !== 'open' || !this.auth) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`);
    const attempt = ++this.attempts;
    const opened = deferred<WASocket>();
    await this.endSocket();
    // stopped or connected again meanwhile
    if (attempt !== this.attempts) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} was stopped during its reconnect`);
    this.openWaiters.add(opened);
    this.restarting = true;
    this.openSocket();
    await opened.promise;
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    if (this.auth?.state.isPaired()) throw new GatewayError('SESSION_ALREADY_PAIRED', `session ${this.name} is already paired`);
    if (this.phase === 'idle') throw new GatewayError('QR_NOT_AVAILABLE', `session ${this.name} has no connection right now (reconnecting or stopped); try again when it shows a QR code`);
    const sock = await timeout(this.registration.promise, QUERY_TIMEOUT_MS, () => new GatewayError('QR_NOT_AVAILABLE', `session ${this.name} did not reach the pairing step in time`));
    if (sock !== this.sock) throw new GatewayError('QR_NOT_AVAILABLE', 'the connection was replaced while waiting for the pairing step; try again');
    try {
      return await sock.requestPairingCode(phoneNumber);
    } catch (err) {
      throw new GatewayError('NETWORK_ERROR', `pairing code request failed: ${(err as Error).message}`, undefined, { cause: err });
    }
  }

  // ---- messaging ----

  sendMessage(chatId: string, content: OutgoingContent, options: SendOptions): Promise<SentMessage> {
    return this.messenger.sendMessage(chatId, content, options);
  }

  editMessage(target: MessageRef, text: string): Promise<void> {
    return this.messenger.editMessage(target, text);
  }

  deleteMessage(target: MessageRef): Promise<void> {
    return this.messenger.deleteMessage(target);
  }

  react(target: MessageRef, emoji: string): Promise<void> {
    return this.messenger.react(target, emoji);
  }

  sendTyping(chatId: string, state: TypingState): Promise<void> {
    return this.messenger.sendTyping(chatId, state);
  }

  markSeen(target: MessageRef): Promise<void> {
    return this.messenger.markSeen(target);
  }

  star(target: MessageRef, star: boolean): Promise<void> {
    return this.messenger.star(target, star);
  }

  votePoll(poll: MessageRef, selectedOptions: string[]): Promise<CastVote> {
    return this.messenger.votePoll(poll, selectedOptions);
  }

  requestHistory(anchor: HistoryAnchor, count: number): Promise<{ requestId: string }> {
    return this.messenger.requestHistory(anchor, count);
  }

  downloadMedia(ref: unknown): Promise<NodeJS.ReadableStream> {
    return this.media.download(ref);
  }

  // ---- calls ----

  rejectCall(callId: string, by: CallRejecter): Promise<void> {
    return this.mapper.calls.reject(callId, by);
  }

  /** Releases what outlives sockets (the proxy's connection pools); created again by the next connect. */
  private async closeRoute(): Promise<void> {
    const route = this.route;
    this.route = undefined;
    await route?.close().catch(() => undefined);
  }

  // ---- internals ----

  /** The stored creds when paired; otherwise a clean slate (a half-finished pairing-code attempt must not be reused: 401). */
  private async freshAuth(): Promise<{ state: SqliteAuthState; keys: SignalKeyStore }> {
    let state = await loadAuthState(this.options.auth);
    if (!state.isPaired() && !(await this.options.auth.isEmpty())) {
      await this.options.auth.clear();
      state = await loadAuthState(this.options.auth);
    }
    return { state, keys: makeCacheableSignalKeyStore(state.keys, this.baileysLog) };
  }

  private openSocket(): void {
    const auth = this.auth!;
    if (this.options.proxy) this.route ??= proxyRoute(this.options.proxy, this.options.urlPolicy);
    this.qrCount = 0;
    this.pairedOnSocket = false;
    this.registration = deferred();
    this.phase = 'connecting';
    const sock = withSharedAsyncStorage(() => makeWASocket({
      auth: { creds: auth.state.creds, keys: auth.keys },
      logger: this.baileysLog,
      browser: this.settings.browser,
      ...(this.settings.websocketUrl ? { waWebSocketUrl: this.settings.websocketUrl } : {}),
      markOnlineOnConnect: this.options.config.markOnlineOnConnect === true,
      syncFullHistory: false,
      defaultQueryTimeoutMs: QUERY_TIMEOUT_MS,
      qrTimeout: this.settings.qr.rotationSeconds * 1000,
      keepAliveIntervalMs: this.keepAlive.watchdog ? NEVER_MS : this.keepAlive.intervalSeconds * 1000,
      getMessage: async (key) => this.storedMessage(key.id ?? undefined, key.remoteJid ?? undefined),
      cachedGroupMetadata: async (jid) => this.ctx.groups.get(jid),
      // contacts' status posts are received unless the session opts out; then they are not even decrypted
      shouldIgnoreJid: (jid) => jid === 'status@broadcast' && this.options.config.ignoreStatus === true,
      ...this.caches,
      ...(this.route ? { agent: this.route.agent as never, fetchAgent: this.route.agent as never, options: { dispatcher: this.route.dispatcher } as unknown as RequestInit } : {}),
    }));
    this.sock = sock;
    this.lastFrame = undefined;
    sock.ws.on('frame', () => {
      if (this.sock === sock) this.lastFrame = Date.now();
    });
    // the mapper could not handle an event of this socket because the store failed: no confirmation may leave after it
    const mapping: { failure?: unknown } = {};
    const gate = this.gateFor(sock, auth, mapping);
    this.gate = gate;
    this.skipStoredRedeliveries(sock);
    // credentials first: Baileys has merged the update into creds before this listener runs, and no frame leaves (one
    // may rely on the new creds) before they are committed
    sock.ev.on('creds.update', () => {
      if (this.sock !== sock) return;
      const saved = auth.state.saveCreds();
      gate.holdUntil(saved);
      saved.catch((err: unknown) => this.dropUncommitted(sock, auth, err));
    });
    sock.ev.on('connection.update', (update) => {
      if (this.sock === sock) this.onConnection(sock, update);
    });
    // the server's answer to each message sent: Baileys reports a refusal (messages.update ERROR) but never an accept
    sock.ws.on('CB:ack,class:message', (node: BinaryNode) => {
      if (this.sock === sock && node.attrs.id) this.ctx.serverAcks.answer(node.attrs.id, node.attrs.error);
    });
    sock.ws.on('CB:receipt', (node: BinaryNode) => {
      if (this.sock === sock) this.decryption.receipt(node);
    });
    sock.ev.process((events) => {
      if (this.sock !== sock) return;
      const upserts = events['messages.upsert']?.messages ?? [];
      this.confirmStoredRedeliveries(sock, upserts);
      this.decryption.upserted(upserts);
      this.events = this.events
        .then(() => this.mapper.handle(events as Partial<BaileysEventMap>))
        .catch((err: unknown) => {
          this.log.error({ err }, 'event mapping failed');
          if (err !== null && typeof err === 'object' && this.storeReadFailures.has(err)) mapping.failure ??= err;
        });
      // after the mapper's queue took them: the receipts of these messages wait for that
      const gate = this.gate;
      if (upserts.length) gate?.upserted(upserts.map((m) => ({ id: m.key.id ?? '', historyNotification: !!normalizeMessageContent(m.message)?.protocolMessage?.historySyncNotification })));
      if (events['messaging-history.set']) gate?.historyArrived();
    });
  }

  private gateFor(sock: WASocket, auth: { state: SqliteAuthState }, mapping: { failure?: unknown }): ConfirmationGate {
    const gate = new ConfirmationGate({
      flushEvents: () => {
        if (sock.ev.isBuffering()) sock.ev.flush();
      },
      // the mapper's queue first (what was flushed is mapped), then the manager's processors and the tick's commit
      committed: (alsoWrite) =>
        this.events.then(() => {
          if (mapping.failure !== undefined) throw mapping.failure;
          if (this.options.hooks.committed) return this.options.hooks.committed(alsoWrite);
          return alsoWrite?.();
        }),
      staged: (batch, work) => auth.state.staged(batch, work),
      commitStaged: (batch) => auth.state.commitStaged(batch),
      abort: (err) => this.dropUncommitted(sock, auth, err),
      logger: this.log,
    });
    gate.install(sock);
    return gate;
  }

  /** The store cannot commit: the connection goes (WhatsApp redelivers what was not confirmed), the keys are read again. */
  private dropUncommitted(sock: WASocket, auth: { state: SqliteAuthState }, err: unknown): void {
    if (this.sock !== sock) return;
    this.log.warn({ err }, 'the store could not commit: dropping the connection, WhatsApp delivers what was not confirmed again');
    auth.state.dropStaged();
    this.keysStale = true;
    this.gate?.close();
    const error = Object.assign(new Error(`the store could not commit: ${(err as Error)?.message ?? String(err)}`), { output: { statusCode: DisconnectReason.unavailableService } });
    void sock.end(error).catch(() => undefined);
  }

  /**
   * A message WhatsApp delivers again after a crash (its receipt had not left) no longer decrypts when its Signal keys
   * were committed with it: Baileys nacks it ('Key used already': no upsert) or upserts a CIPHERTEXT stub, and sends no
   * receipt. Stored, it is confirmed here.
   */
  private confirmStoredRedeliveries(sock: WASocket, messages: BaileysEventMap['messages.upsert']['messages']): void {
    for (const msg of messages) {
      const { id, remoteJid, fromMe, participant } = msg.key;
      if (msg.messageStubType !== proto.WebMessageInfo.StubType.CIPHERTEXT || fromMe || !id || !remoteJid) continue;
      void this.confirmIfStored(sock, id, remoteJid, participant ?? undefined);
    }
  }

  /** Baileys' 'sent ack' debug line: a nack for spent keys (487, MISSING_KEYS_ERROR_TEXT) of a message stanza. */
  private noticeSpentRedelivery(msg: string | undefined, fields: unknown): void {
    if (msg !== 'sent ack') return;
    const { recv, sent } = (fields ?? {}) as { recv?: { tag?: string; attrs?: Record<string, string> }; sent?: Record<string, string> };
    const sock = this.sock;
    const { id, from, participant, recipient } = recv?.attrs ?? {};
    if (!sock || recv?.tag !== 'message' || sent?.error !== SPENT_KEYS_NACK || !id || !from || recipient) return;
    // not from inside Baileys' own send
    setImmediate(() => void this.confirmIfStored(sock, id, from, participant));
  }

  /**
   * A message WhatsApp delivers again after a crash, when the message and its Signal keys were committed but its receipt
   * had not left: Baileys would fail to decrypt it (its keys are spent) and ask the sender for it again with a retry
   * receipt, as if keys were lost. Found in the store before Baileys sees it, it is confirmed here (receipt and ack, held
   * by the gate like any confirmation) and never reaches Baileys. Only stanzas from the offline queue (`offline`) are
   * looked up: that is how WhatsApp delivers what a device did not confirm, and live traffic pays no store read for it.
   */
  private skipStoredRedeliveries(sock: WASocket): void {
    const ws = sock.ws as unknown as { emit(event: string | symbol, ...args: unknown[]): boolean };
    const emit = ws.emit.bind(ws);
    /** the message stanzas held while an offline one is looked up: they reach Baileys after it, in their order */
    let held: Promise<void> | undefined;
    ws.emit = (event, ...args) => {
      if (event !== 'CB:message') return emit(event, ...args);
      const node = args[0] as BinaryNode;
      const lookUp = this.mayBeStoredRedelivery(sock, node);
      if (!lookUp && !held) return emit(event, ...args);
      const turn = (held ?? Promise.resolve()).then(async () => {
        if (lookUp && this.sock === sock && (await this.isStored(node.attrs.id!))) {
          this.log.info({ messageId: node.attrs.id }, 'a stored message came again: confirming it without decrypting it');
          await sock
            .sendReceipt(node.attrs.from!, node.attrs.participant, [node.attrs.id!], undefined)
            .then(() => sock.sendMessageAck(node))
            .catch((err: unknown) => this.log.debug({ err }, 'confirmation of a redelivered message not sent'));
          return;
        }
        emit(event, ...args);
      });
      const tracked = turn.catch((err: unknown) => this.log.warn({ err, messageId: node.attrs.id }, 'a held message stanza failed'));
      held = tracked;
      void tracked.then(() => {
        if (held === tracked) held = undefined;
      });
      return true;
    };
  }

  /** An offline stanza of someone else's message: it may be one the store holds (looked up before Baileys sees it). */
  private mayBeStoredRedelivery(sock: WASocket, node: BinaryNode): boolean {
    const { id, from, recipient, offline } = node.attrs ?? {};
    // `recipient`: the session's own message from another of its devices, which is not confirmed with a receipt
    return this.sock === sock && !!offline && !!id && !!from && !recipient;
  }

  /** A store that cannot be read confirms nothing: WhatsApp delivers the message again. */
  private async isStored(id: string): Promise<boolean> {
    try {
      return this.options.messageStored ? await this.options.messageStored(id) : (await this.ctx.lookupMessage(id)) !== undefined;
    } catch (err) {
      this.log.warn({ err, messageId: id }, 'could not check whether a redelivered message is stored; not confirming it');
      return false;
    }
  }

  private async confirmIfStored(sock: WASocket, id: string, jid: string, participant: string | undefined): Promise<void> {
    if (this.sock !== sock || !(await this.isStored(id)) || this.sock !== sock) return;
    this.log.info({ messageId: id }, 'a stored message came again and did not decrypt: confirming it');
    void sock.sendReceipt(jid, participant, [id], undefined).catch((err: unknown) => this.log.debug({ err }, 'receipt for a redelivered message not sent'));
  }

  private onConnection(sock: WASocket, update: Partial<ConnectionState>): void {
    if (update.isNewLogin) this.pairedOnSocket = true;
    if (update.qr) {
      this.qrCount += 1;
      const limit = this.settings.qr.maxRotations;
      if (this.qrCount > limit) {
        void this.endSocket();
        const message = `no scan or pairing code after ${limit} QR codes (sessions.qrMaxRotations)`;
        this.report({ kind: 'close', reason: 'QR_TIMEOUT', detail: message, cause: { code: 'QR_TIMEOUT', message } });
        return;
      }
      this.registration.resolve(sock);
      this.report({ kind: 'qr', qr: update.qr, expiresAt: new Date(Date.now() + this.settings.qr.rotationSeconds * 1000).toISOString() });
    }
    if (update.connection === 'open') {
      this.phase = 'open';
      this.restarting = false;
      const me = this.auth!.state.creds.me;
      this.ctx.ids.remember(me?.id, me?.lid, 'network');
      this.report({ kind: 'open', account: this.account() });
      for (const waiter of this.openWaiters) waiter.resolve(sock);
      this.openWaiters.clear();
      this.startKeepAlive(sock);
      void this.afterOpen(sock);
    }
    if (update.connection === 'close') {
      const error = update.lastDisconnect?.error;
      let action = classifyClose(closeStatusCode(error), { stopping: false, paired: this.auth?.state.isPaired() ?? false, message: error?.message, error, viaProxy: this.route !== undefined });
      // after pair-success the server makes the client log in again: with 515 after a QR scan, and (as operators saw
      // on the real server) sometimes with a plain close after a pairing-code login; either way it is that restart
      if (this.pairedOnSocket && action.kind === 'report' && (action.report.reason === 'AUTO_RECONNECT' || action.report.reason === 'STREAM_ERROR')) action = { kind: 'restart' };
      this.sock = undefined;
      this.phase = 'idle';
      clearInterval(this.keepAliveTimer);
      this.registration.reject(new GatewayError('QR_NOT_AVAILABLE', 'the connection closed before the pairing step'));
      if (action.kind === 'restart' && this.mayRestart()) {
        this.log.info({ code: closeStatusCode(error) }, 'restart required by the server: reconnecting at once');
        this.restarting = true;
        this.openSocket();
        return;
      }
      this.restarting = false;
      const report = action.kind === 'report' ? action.report : action.kind === 'restart' ? { kind: 'close' as const, reason: 'STREAM_ERROR' as const, detail: `the server asked for ${MAX_RESTARTS} restarts in a row` } : undefined;
      if (!report) return;
      if (report.credentialsCleared) this.auth = undefined;
      this.failWaiters(report.detail ?? report.reason);
      this.report(report);
    }
  }

  /** With the watchdog, the engine pings (Baileys' keep-alive is off): the answers are the frames the watchdog watches. */
  private startKeepAlive(sock: WASocket): void {
    if (!this.keepAlive.watchdog) return;
    clearInterval(this.keepAliveTimer);
    const intervalMs = this.keepAlive.intervalSeconds * 1000;
    this.keepAliveTimer = setInterval(() => {
      if (this.sock !== sock || this.phase !== 'open') return;
      ping(sock, intervalMs).catch((err: unknown) => this.log.debug({ err }, 'keep-alive ping not answered'));
    }, intervalMs);
    this.keepAliveTimer.unref();
  }

  private get keepAlive(): { intervalSeconds: number; watchdog: boolean } {
    return this.settings.keepAlive ?? DEFAULT_KEEP_ALIVE;
  }

  private mayRestart(): boolean {
    const now = Date.now();
    this.restarts = [...this.restarts.filter((t) => now - t < RESTART_WINDOW_MS), now];
    return this.restarts.length <= MAX_RESTARTS;
  }

  /** After open: the blocklist snapshot (blocklist.set is never emitted by rc14) and a warm group cache. */
  private async afterOpen(sock: WASocket): Promise<void> {
    try {
      const blocked = await sock.fetchBlocklist();
      if (this.sock === sock && blocked.length) {
        this.options.hooks.event('blocklist.update', { action: 'blocked', jids: blocked.filter((j): j is string => !!j).map((j) => this.ctx.ids.canonical(j) ?? j), snapshot: true });
      }
      const groups = await sock.groupFetchAllParticipating();
      for (const meta of Object.values(groups)) this.ctx.groups.set(meta.id, meta);
    } catch (err) {
      if (this.sock === sock) this.log.debug({ err }, 'post-open queries failed');
    }
  }

  private account(): AccountInfo {
    const creds = this.auth!.state.creds;
    const me = creds.me!;
    const digits = me.id.split('@')[0]!.split(':')[0]!;
    const business = isWABusinessPlatform(creds.platform ?? '');
    const pushName = me.name && me.name !== '~' ? me.name : undefined;
    const businessName = business ? (me.verifiedName ?? pushName) : undefined;
    const lid = bare(me.lid);
    return {
      phoneNumber: `+${digits}`,
      ...(pushName ? { pushName } : {}),
      ...(businessName ? { businessName } : {}),
      platform: business ? 'smba' : 'consumer',
      ...(lid ? { lid } : {}),
    };
  }

  /** The open socket; during a 515 reconnect the caller waits for the new one. */
  private ready(): Promise<WASocket> {
    if (this.phase === 'open' && this.sock) return Promise.resolve(this.sock);
    if (this.restarting) {
      const waiter = deferred<WASocket>();
      this.openWaiters.add(waiter);
      return timeout(waiter.promise, RESTART_WAIT_MS, () => {
        this.openWaiters.delete(waiter);
        return new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is reconnecting`);
      });
    }
    return Promise.reject(new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected`));
  }

  private failWaiters(why: string): void {
    for (const waiter of this.openWaiters) waiter.reject(new GatewayError('SESSION_NOT_CONNECTED', `session ${this.name} is not connected: ${why}`));
    this.openWaiters.clear();
  }

  /** getMessage for Baileys (retry receipts, event responses): the stored WAMessage's content. */
  private async storedMessage(id: string | undefined, chatId: string | undefined): Promise<proto.IMessage | undefined> {
    if (!id) return undefined;
    const ref = (await this.ctx.lookupMessage(id, chatId)) ?? (await this.ctx.lookupMessage(id));
    return fromRaw(ref?.raw)?.message ?? undefined;
  }

  /** Forgets the current socket so its late events are ignored. */
  private detach(): WASocket | undefined {
    const sock = this.sock;
    this.sock = undefined;
    clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
    this.gate?.close();
    this.gate = undefined;
    this.phase = 'idle';
    this.restarting = false;
    this.registration.reject(new GatewayError('QR_NOT_AVAILABLE', 'the connection was closed'));
    return sock;
  }

  private async endSocket(): Promise<void> {
    const sock = this.detach();
    if (sock) await sock.end(undefined).catch((err: unknown) => this.log.debug({ err }, 'ending the socket failed'));
  }

  private report(update: ConnectionUpdate): void {
    this.options.hooks.connection(update);
  }
}

/** The keep-alive ping of WhatsApp Web (`<iq xmlns="w:p"><ping/></iq>`); resolves with the server's answer. */
async function ping(sock: WASocket, timeoutMs: number): Promise<void> {
  await sock.query({ tag: 'iq', attrs: { id: sock.generateMessageTag(), to: S_WHATSAPP_NET, type: 'get', xmlns: 'w:p' }, content: [{ tag: 'ping', attrs: {} }] }, timeoutMs);
}

/** Gives BaileysSession the ChatOps methods: groups from BaileysGroups, the rest from BaileysChats. */
function delegateChatOps(prototype: object): void {
  const groupOps = ['createGroup', 'listGroups', 'getGroup', 'leaveGroup', 'deleteGroup', 'setGroupSubject', 'setGroupDescription', 'setGroupPicture', 'updateParticipants', 'getInviteCode', 'revokeInviteCode', 'getInviteInfo', 'acceptInvite'];
  const chatOps = ['createChannel', 'getChannel', 'deleteChannel', 'followChannel', 'unfollowChannel', 'muteChannel', 'unmuteChannel', 'setPresence', 'subscribePresence', 'getContact', 'getProfilePicture', 'setProfilePicture', 'checkNumbers', 'setBlocked', 'saveLabel', 'deleteLabel', 'setChatLabel', 'changeChat'];
  for (const [part, ops] of [['groups', groupOps], ['chats', chatOps]] as const) {
    for (const op of ops) {
      Object.defineProperty(prototype, op, {
        configurable: true,
        writable: true,
        value: function chatOp(this: Record<string, Record<string, (...a: unknown[]) => unknown>>, ...args: unknown[]) {
          return this[part]![op]!.call(this[part], ...args);
        },
      });
    }
  }
}

delegateChatOps(BaileysSession.prototype);
