// The session manager: the state machine of SPEC §3 over engine sessions, restore at boot, reconnect with backoff.
import PQueue from 'p-queue';
import { checkProxyUrl, type UrlPolicy } from '../net/url-guard.js';
import { GatewayError, notFound } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import type { EventType } from '../events/catalogue.js';
import type { Logger } from '../logger.js';
import type { AuthStateRepo } from '../store/auth-state.js';
import type { IdentitiesRepo } from '../store/identities.js';
import type { LastError, SessionRow, SessionsRepo } from '../store/sessions.js';
import type { TickTransaction } from '../store/sql.js';
import type { EngineRegistry } from '../engine/index.js';
import type { CloseCause, ConnectionUpdate, Engine, EngineName, EngineSession, MessageRef, SessionStatus, StatusReason } from '../engine/types.js';
import { reconnectDelayMs } from './backoff.js';
import { withLogoutReason } from '../engine/logouts.js';
import { SessionHealth, type HealthView } from './health.js';
import type { HealthReport } from './watchdog.js';
import type { SessionHealthConfig } from '../config/types.js';
import type { SessionPlacement } from '../cluster/cluster.js';
import type { DecryptionSignal } from '../engine/decryption.js';
import { DecryptionCounters, type DecryptionCounts } from './decryption-counters.js';

export interface ManagerSettings {
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  reconnectMaxAttempts: number;
  /** sessions that may exist at once (unlimited when absent) */
  maxSessions?: number;
  /**
   * At boot, sessions of an engine that connects to a network start at most this many per second, evenly spaced, so a
   * restart does not storm the network; 0 (or absent) starts them all at once.
   */
  restoreRatePerSecond?: number;
  /** the health watchdog's times (absent, or silenceSeconds 0: no watchdog) */
  health?: SessionHealthConfig;
}

export interface CreateSessionInput {
  name: string;
  engine?: EngineName;
  proxy?: string;
  config?: Record<string, unknown>;
  start?: boolean;
}

/**
 * Runs before an engine event is published, e.g. to store a received message; may enrich the payload,
 * and returns false to drop an event that changes nothing (a repeated ack). A processor that returns a
 * promise (auto-persist uploading media) holds this session's later events back, so their order is kept.
 */
export type EngineEventProcessor = (
  session: string,
  type: EventType,
  payload: Record<string, unknown>,
) => boolean | void | Promise<boolean | void>;

/** A stored message of a session, as engines see it. */
export type MessageLookup = (session: string, id: string, chatId?: string) => Promise<MessageRef | undefined>;
/** Whether a message of this id is stored for the session (nothing decrypted). */
export type MessageExists = (session: string, id: string) => Promise<boolean>;

type StatusPair = Pick<SessionRow, 'status' | 'statusReason'>;

interface Runtime {
  engine: EngineSession;
  qr?: { qr: string; expiresAt: string };
  failures: number;
  reconnectTimer?: NodeJS.Timeout;
}

/** Reasons after which the session stays down until someone starts it again. */
const TERMINAL_REASONS = new Set<StatusReason>(['LOGGED_OUT', 'TEMPORARY_BAN', 'QR_TIMEOUT', 'FAILED']);

type CloseReason = Extract<ConnectionUpdate, { kind: 'close' }>['reason'];

/** The cause of a close the engine did not explain (the sandbox's drops, a connect that threw). */
const CAUSE_OF_REASON: Record<CloseReason, CloseCause['code']> = {
  AUTO_RECONNECT: 'NETWORK_LOST',
  STREAM_ERROR: 'STREAM_ERROR',
  LOGGED_OUT: 'LOGGED_OUT',
  TEMPORARY_BAN: 'TEMPORARILY_BANNED',
  QR_TIMEOUT: 'QR_TIMEOUT',
  FAILED: 'LOGIN_REFUSED',
};

/** how long after a lost tick the statuses are written again (rewriteStatuses) */
const STATUS_REWRITE_DELAY_MS = 1000;

/** One daemon: every session runs here. */
const HERE: SessionPlacement = { claim: async () => true, release: async () => {}, epochOf: () => undefined };

export class SessionManager {
  private readonly runtimes = new Map<string, Runtime>();
  private readonly processors: EngineEventProcessor[] = [];
  private readonly deletedListeners: ((name: string) => void | Promise<void>)[] = [];
  private readonly reconnectListeners: ((engine: EngineName, reason: StatusReason) => void)[] = [];
  private readonly decryptionListeners: ((session: string, signal: DecryptionSignal) => void)[] = [];
  private readonly decryption = new DecryptionCounters();
  private readonly healthListeners: ((report: HealthReport) => void)[] = [];
  private messageLookup: MessageLookup | undefined;
  private messageExists: MessageExists | undefined;
  /** per session: the event still being processed asynchronously, which later events queue behind */
  private readonly inProcess = new Map<string, Promise<unknown>>();
  /** per session: the first event that could not be stored since the engine last asked (hooks.committed) */
  private readonly storeFailures = new Map<string, unknown>();
  /**
   * per session: the tick mark of its oldest event hooks.committed has not yet seen committed, and the count of events
   * (of every session) when it last had one
   */
  private readonly uncheckedEvents = new Map<string, { since: number; emitted: number }>();
  private emitted = 0;
  /** restored sessions waiting for their turn to connect (see ManagerSettings.restoreRatePerSecond) */
  private restoreQueue: PQueue | undefined;
  private stopping = false;
  /** how many times each session was torn down (stop, delete, logout): a launch that reads the store checks it after */
  private readonly teardowns = new Map<string, number>();
  private statusRewrite: NodeJS.Timeout | undefined;
  /** starts under way per session, their leases taken (holdingLease) */
  private readonly starting = new Map<string, number>();
  /**
   * The stored status of each session this manager changed or read, so that a status change (from the engine's
   * synchronous hooks too) is staged and published at once, in order with the events around it, without a read.
   * A running session's status is written by this node only (one daemon, or its lease).
   */
  private readonly statuses = new Map<string, StatusPair>();
  /** counts status writes: a row read before one of them does not replace what it wrote */
  private statusWrites = 0;
  /** per session: credentials being cleared (a session launched meanwhile waits for it) */
  private readonly clearing = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      sessions: SessionsRepo;
      authState: AuthStateRepo;
      /** the phone-number ↔ LID pairs sessions learnt (absent: engines keep them in memory only) */
      identities?: IdentitiesRepo;
      engines: EngineRegistry;
      bus: EventBus;
      logger: Logger;
      settings: ManagerSettings;
      defaultEngine: EngineName;
      /** where a session's proxy may point (the daemon's outbound URL policy) */
      urlPolicy: UrlPolicy;
      /** in a cluster, the leases (src/cluster/cluster.ts); on one daemon every session runs here */
      placement?: SessionPlacement;
      /** the tick transaction: hooks.committed waits for the ticks of a session's events, and writes after them */
      ticks?: Pick<TickTransaction, 'mark' | 'committed' | 'committedSince' | 'writeAfter'>;
    },
  ) {
    this.placement = deps.placement ?? HERE;
    const health = deps.settings.health;
    this.health = new SessionHealth({
      settings: health && health.silenceSeconds > 0 ? { silenceMs: health.silenceSeconds * 1000, probeTimeoutMs: health.probeTimeoutSeconds * 1000, recoverMs: health.recoverSeconds * 1000 } : undefined,
      connection: (name) => (this.statuses.get(name)?.status === 'CONNECTED' ? this.runtimes.get(name)?.engine : undefined),
      restart: (name) => this.restartDeaf(name),
      report: (name, report) => this.reportHealth(name, report),
    });
  }

  private readonly placement: SessionPlacement;
  private readonly health: SessionHealth;

  /** Called with each step of a session's health watchdog and each recovery (metrics). */
  onHealth(listener: (report: HealthReport) => void): void {
    this.healthListeners.push(listener);
  }

  /** The session's health and last frame, as this daemon sees it (null, null when it does not run here). */
  healthOf(name: string): HealthView {
    return this.health.view(name);
  }

  /** Sessions whose watchdog found them deaf and has not seen them recover. */
  degradedCount(): number {
    return this.health.degradedCount();
  }

  addEventProcessor(processor: EngineEventProcessor): void {
    this.processors.push(processor);
  }

  /**
   * Runs after a session is deleted: what was granted on its name must not pass to a later session of that name. The
   * delete settles once every listener has (in the order they were added).
   */
  onDeleted(listener: (name: string) => void | Promise<void>): void {
    this.deletedListeners.push(listener);
  }

  /** Told each time a dropped session is scheduled to reconnect, with the reason it dropped (metrics). */
  onReconnecting(listener: (engine: EngineName, reason: StatusReason) => void): void {
    this.reconnectListeners.push(listener);
  }

  /** Told each decryption fact an engine reports (retry receipts, failures, exhausted retries), with its session (metrics). */
  onDecryption(listener: (session: string, signal: DecryptionSignal) => void): void {
    this.decryptionListeners.push(listener);
  }

  /** The decryption counters of a session this daemon runs or ran since it started; undefined otherwise. */
  decryptionOf(name: string): DecryptionCounts | undefined {
    return this.decryption.of(name);
  }

  /** How engines find stored messages (quotes, re-sends on retry receipts, poll secrets). */
  setMessageLookup(lookup: MessageLookup, exists?: MessageExists): void {
    this.messageLookup = lookup;
    this.messageExists = exists;
  }

  // ---- queries ----

  async get(name: string): Promise<SessionRow> {
    const row = await this.find(name);
    if (!row) throw notFound('SESSION_NOT_FOUND', `session ${name}`);
    return row;
  }

  /** The session's row; undefined when there is no such session. */
  async find(name: string): Promise<SessionRow | undefined> {
    const writes = this.statusWrites;
    const row = await this.deps.sessions.get(name);
    if (row) this.noteStatus(row, writes);
    return row;
  }

  async exists(name: string): Promise<boolean> {
    return (await this.deps.sessions.get(name)) !== undefined;
  }

  async list(limit?: number, offset?: number): Promise<{ rows: SessionRow[]; total: number }> {
    const [rows, total] = await Promise.all([this.deps.sessions.list(limit, offset), this.deps.sessions.count()]);
    return { rows, total };
  }

  counts(): Promise<{ total: number; connected: number }> {
    return this.deps.sessions.counts();
  }

  isRunning(name: string): boolean {
    return this.runtimes.has(name);
  }

  /** The engine session of a CONNECTED session, for operations that need the network. */
  async connected(name: string): Promise<EngineSession> {
    const row = await this.get(name);
    const runtime = this.runtimes.get(name);
    if (!runtime || row.status !== 'CONNECTED') {
      throw new GatewayError('SESSION_NOT_CONNECTED', `session ${name} is not connected (status ${row.status}${row.statusReason ? `, ${row.statusReason}` : ''})`);
    }
    return runtime.engine;
  }

  /** The engine session of a CONNECTED session; undefined when it is not connected (answers from the store alone). */
  async connectedOrNone(name: string): Promise<EngineSession | undefined> {
    try {
      return await this.connected(name);
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'SESSION_NOT_CONNECTED') return undefined;
      throw err;
    }
  }

  /** The engine session of a running session, whatever its status (sandbox controls use it). */
  async running(name: string): Promise<EngineSession> {
    await this.get(name);
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new GatewayError('SESSION_NOT_STARTED', `session ${name} is not started`);
    return runtime.engine;
  }

  async engineOf(name: string): Promise<EngineName> {
    return (await this.get(name)).engine;
  }

  async currentQr(name: string): Promise<{ qr: string; expiresAt: string }> {
    const row = await this.get(name);
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new GatewayError('SESSION_NOT_STARTED', `session ${name} is not started; start it to get a QR code`);
    if (row.status === 'CONNECTED') throw new GatewayError('SESSION_ALREADY_PAIRED', `session ${name} is already paired`);
    if (!runtime.qr) throw new GatewayError('QR_NOT_AVAILABLE', `session ${name} has no QR code right now (status ${row.status})`);
    return runtime.qr;
  }

  // ---- commands ----

  async create(input: CreateSessionInput): Promise<SessionRow> {
    if (await this.deps.sessions.get(input.name)) throw new GatewayError('SESSION_EXISTS', `session ${input.name} already exists`);
    const max = this.deps.settings.maxSessions;
    if (max !== undefined && (await this.deps.sessions.count()) >= max) {
      throw new GatewayError('LIMIT_REACHED', `this daemon already has ${max} sessions, its limit (sessions.maxSessions); delete one first`);
    }
    const engine = input.engine ?? this.deps.defaultEngine;
    this.checkEngine(engine);
    if (input.proxy !== undefined) checkProxyUrl(input.proxy, this.deps.urlPolicy);
    const row = await this.deps.sessions.insert({ name: input.name, engine, proxy: input.proxy, config: input.config ?? {} });
    this.noteStatus(row, this.statusWrites);
    if (!input.start) return row;
    await this.start(input.name);
    return this.get(row.name);
  }

  /**
   * Changes a session's settings: each key of `patch` replaces the stored one, a null removes it, the others stay. The
   * call policy (`calls`) applies from the next call; what the engine reads at its start (safeMode, markOnlineOnConnect,
   * ignoreStatus) from the session's next start.
   */
  async updateConfig(name: string, patch: Record<string, unknown>): Promise<SessionRow> {
    const row = await this.get(name);
    const config = { ...row.config };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete config[key];
      else config[key] = value;
    }
    if (!(await this.deps.sessions.setConfig(name, config))) throw notFound('SESSION_NOT_FOUND', `session ${name}`);
    return this.get(name);
  }

  /** Returns false when the session was already running. */
  async start(name: string): Promise<boolean> {
    // the engine's code may load first; the row is read after, so a change made meanwhile counts
    const engine = await this.engine((await this.get(name)).engine);
    const row = await this.get(name);
    if (this.runtimes.has(name)) return false;
    if (row.proxy) checkProxyUrl(row.proxy, this.deps.urlPolicy);
    if (!(await this.placement.claim(name))) throw new GatewayError('SESSION_ON_OTHER_NODE', `session ${name} runs on another node; retry the request`);
    return this.holdingLease(name, async () => {
      // claimed meanwhile by a second start of this node
      if (this.runtimes.has(name)) return false;
      this.deps.sessions.setShouldRun(name, true);
      await this.launch(row, engine);
      return true;
    });
  }

  /** Returns false when the session was not running. */
  async stop(name: string): Promise<boolean> {
    await this.get(name);
    const wasRunning = await this.teardown(name);
    this.deps.sessions.setShouldRun(name, false);
    this.setStatus(name, 'DISCONNECTED', 'MANUAL_STOP');
    return wasRunning;
  }

  async restart(name: string): Promise<void> {
    await this.stop(name);
    await this.start(name);
  }

  async logout(name: string): Promise<void> {
    await this.get(name);
    this.teardowns.set(name, (this.teardowns.get(name) ?? 0) + 1);
    const runtime = this.runtimes.get(name);
    if (runtime) {
      this.forget(name, runtime);
      await runtime.engine.logout().catch((err: unknown) => this.deps.logger.warn({ err, session: name }, 'engine logout failed; clearing credentials locally'));
    }
    await this.clearCredentials(name);
    await this.placement.release(name);
    this.deps.sessions.setAccount(name, null);
    this.deps.sessions.setShouldRun(name, false);
    this.setStatus(name, 'DISCONNECTED', 'LOGGED_OUT');
    this.emit(name, 'session.logged_out', { reason: 'LOGOUT' });
  }

  async delete(name: string): Promise<void> {
    await this.get(name);
    this.health.forget(name);
    await this.teardown(name);
    await this.deps.sessions.delete(name);
    this.statuses.delete(name);
    this.decryption.forget(name);
    for (const listener of this.deletedListeners) await listener(name);
  }

  async requestPairingCode(name: string, phoneDigits: string): Promise<string> {
    const row = await this.get(name);
    if (row.status === 'CONNECTED') throw new GatewayError('SESSION_ALREADY_PAIRED', `session ${name} is already paired`);
    if (!this.runtimes.has(name)) await this.start(name);
    return this.runtimes.get(name)!.engine.requestPairingCode(phoneDigits);
  }

  /**
   * Loads the engines of the sessions restoreAll will start, and shows CONNECTING those it will queue (their turn may be
   * seconds away). The daemon calls it before it listens, so that no request finds a session still marked as the last
   * run left it (CONNECTED, or stopped by the shutdown) that restoreAll has not reached yet, because its engine's code
   * was still loading or the store's reads before it were under way; a daemon without such sessions loads nothing.
   */
  async prepareRestore(): Promise<void> {
    const writes = this.statusWrites;
    const rows = (await this.deps.sessions.list()).filter((row) => row.shouldRun);
    const engines = new Map<EngineName, Engine | undefined>();
    await Promise.all(
      [...new Set(rows.map((row) => row.engine))].map(async (name) =>
        engines.set(name, await this.engine(name).catch((err: unknown) => void this.deps.logger.error({ err, engine: name }, 'engine failed to load'))),
      ),
    );
    // in a cluster, sessions are adopted as their leases allow (adopt shows them CONNECTING)
    if (this.placement !== HERE) return;
    const queued = rows.filter((row) => engines.get(row.engine)?.connectsToNetwork && this.spreadRestores());
    const reasons = await Promise.all(queued.map((row) => this.connectingReason(row.name)));
    for (const [i, row] of queued.entries()) {
      this.noteStatus(row, writes);
      this.setStatus(row.name, 'CONNECTING', reasons[i]!);
    }
  }

  /**
   * Starts every session that was running when the daemon stopped. Sessions of an engine that connects to a network are
   * queued at `restoreRatePerSecond` (shown CONNECTING while they wait) and this returns before they all started.
   */
  async restoreAll(): Promise<number> {
    // in a cluster, sessions are adopted by the nodes as their leases allow (Cluster.run → adopt)
    if (this.placement !== HERE) return 0;
    let restored = 0;
    const writes = this.statusWrites;
    for (const row of await this.deps.sessions.list()) {
      this.noteStatus(row, writes);
      if (row.shouldRun) {
        restored += 1;
        const engine = await this.engine(row.engine).catch((err: unknown) => void this.deps.logger.error({ err, session: row.name }, 'restore failed'));
        if (!engine) continue;
        const queue = engine.connectsToNetwork ? this.spreadRestores() : undefined;
        if (!queue) {
          await this.restore(row.name, engine).catch((err: unknown) => this.deps.logger.error({ err, session: row.name }, 'restore failed'));
          continue;
        }
        // shown CONNECTING by prepareRestore already, unless it started or stopped since
        if (this.statuses.get(row.name)?.status !== 'CONNECTING') this.setStatus(row.name, 'CONNECTING', await this.connectingReason(row.name));
        void queue.add(() => this.restore(row.name, engine)).catch((err: unknown) => this.deps.logger.error({ err, session: row.name }, 'restore failed'));
      } else if (row.status !== 'DISCONNECTED') {
        this.storeStatus(row.name, 'DISCONNECTED', row.statusReason);
      }
    }
    return restored;
  }

  /**
   * Closes every engine session, keeping which ones should run for the next boot (`shouldRun`). Each is recorded as
   * stopped (DISCONNECTED/MANUAL_STOP) without an event, the daemon going down, so that the first status event after
   * the restart does not claim it was CONNECTED.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.health.stopAll();
    clearTimeout(this.statusRewrite);
    this.restoreQueue?.clear();
    await this.restoreQueue?.onIdle();
    await Promise.all(
      [...this.runtimes.keys()].map(async (name) => {
        await this.teardown(name, false);
        this.storeStatus(name, 'DISCONNECTED', 'MANUAL_STOP');
        // in a cluster, another node takes it at once
        await this.placement.release(name);
      }),
    );
  }

  /**
   * Starts a session no node runs (its node died or let it go) if this node gets its lease: from its stored credentials,
   * spaced like a restore for a networked engine. In a cluster only.
   */
  async adopt(name: string): Promise<void> {
    const row = await this.find(name);
    if (this.stopping || !row?.shouldRun || this.runtimes.has(name)) return;
    const engine = await this.engine(row.engine);
    if (!(await this.placement.claim(name))) return;
    await this.holdingLease(name, async () => {
      // stopped or deleted while the engine loaded or the lease was taken (a request may come in between)
      if (this.stopping || !(await this.find(name))?.shouldRun) return this.placement.release(name);
      if (this.runtimes.has(name)) return;
      const queue = engine.connectsToNetwork ? this.spreadRestores() : undefined;
      if (!queue) return this.restore(name, engine);
      const reason = await this.connectingReason(name);
      if (this.runtimes.has(name)) return;
      this.setStatus(name, 'CONNECTING', reason);
      void queue.add(() => this.restore(name, engine)).catch((err: unknown) => this.deps.logger.error({ err, session: name }, 'restore failed'));
    });
  }

  /** Stops a session here without a write: its lease is gone and another node may already run it. */
  async relinquish(name: string): Promise<void> {
    const runtime = this.runtimes.get(name);
    if (!runtime) return;
    this.health.forget(name);
    this.forget(name, runtime);
    await runtime.engine.disconnect().catch((err: unknown) => this.deps.logger.warn({ err, session: name }, 'engine disconnect failed'));
    // the lease is handed on only once the session's last events are committed: the next node numbers on from the
    // store, and would give an event still in the open tick's numbers again (a lost tick's events were never told)
    await this.deps.ticks?.committed()?.catch(() => {});
  }

  /** Sessions that should run, on whichever node. */
  shouldRunCount(): Promise<number> {
    return this.deps.sessions.countShouldRun();
  }

  // ---- internals ----

  /** The queue that spaces restored sessions' first connection attempts; none when the rate is unlimited. */
  private spreadRestores(): PQueue | undefined {
    const rate = this.deps.settings.restoreRatePerSecond ?? 0;
    if (rate <= 0) return undefined;
    this.restoreQueue ??= new PQueue({ interval: 1000 / rate, intervalCap: 1 });
    return this.restoreQueue;
  }

  /** Starts a session restored at boot or adopted (its lease taken for it); a failure is the caller's to log. */
  private restore(name: string, engine: Engine): Promise<void> {
    return this.holdingLease(name, async () => {
      // a /start reached it first (the daemon listens while it restores), or it was stopped or deleted while it waited
      const row = await this.find(name);
      if (this.runtimes.has(name)) return;
      // in a cluster its lease was taken for it: given back
      if (this.stopping || !row?.shouldRun) return this.placement.release(name);
      await this.launch(row, engine);
    });
  }

  /**
   * Runs `start`, the rest of a start of `name` once its lease is taken. When it fails (the store went away during its
   * reads) and the session runs nowhere here, with no other start of it under way, the lease is given back: in a
   * cluster the session is then adopted again whole, by this node or another, once the database answers; a lease kept
   * with nothing running would be renewed for ever.
   */
  private async holdingLease<R>(name: string, start: () => Promise<R>): Promise<R> {
    this.starting.set(name, (this.starting.get(name) ?? 0) + 1);
    try {
      return await start();
    } catch (err) {
      if (!this.runtimes.has(name) && this.starting.get(name) === 1) {
        await this.placement.release(name).catch((failure: unknown) => this.deps.logger.warn({ err: failure, session: name }, 'could not give the lease up'));
      }
      throw err;
    } finally {
      const left = this.starting.get(name)! - 1;
      if (left === 0) this.starting.delete(name);
      else this.starting.set(name, left);
    }
  }

  /** The watchdog's last step: the session stops and starts again here (its lease kept), its state read from the store. */
  private async restartDeaf(name: string): Promise<void> {
    if (!this.runtimes.has(name) || this.stopping) throw new GatewayError('SESSION_NOT_STARTED', `session ${name} is not running`);
    this.deps.logger.warn({ session: name }, 'the session stayed silent after a reconnect: restarting it');
    try {
      await this.holdingLease(name, async () => {
        // the count as this teardown leaves it: a stop or delete landing while it disconnects wins over the restart
        const tearingDown = this.teardown(name, false);
        const teardowns = this.teardowns.get(name) ?? 0;
        await tearingDown;
        const row = await this.get(name);
        if (!row.shouldRun) return;
        await this.launch(row, await this.engine(row.engine), teardowns);
      });
    } catch (err) {
      // stopped here and not started again (the store failed meanwhile): the status must not go on saying CONNECTED
      if (!this.runtimes.has(name)) this.setStatus(name, 'DISCONNECTED', 'FAILED');
      throw err;
    }
  }

  private reportHealth(name: string, report: HealthReport): void {
    const lastFrameAt = report.lastFrameAt === undefined ? null : new Date(report.lastFrameAt).toISOString();
    const log = report.state === 'degraded' ? this.deps.logger.warn.bind(this.deps.logger) : this.deps.logger.info.bind(this.deps.logger);
    log({ session: name, state: report.state, step: report.step, reason: report.reason, lastFrameAt }, report.state === 'degraded' ? 'session deaf: taking a step' : 'session frames back');
    for (const listener of this.healthListeners) listener(report);
    try {
      this.emit(name, 'session.health', { state: report.state, step: report.step, reason: report.reason, lastFrameAt });
    } catch (err) {
      this.deps.logger.error({ err, session: name }, 'could not record a session.health event');
    }
  }

  private checkEngine(name: EngineName): void {
    if (!this.deps.engines.has(name)) throw new GatewayError('NOT_SUPPORTED', `the ${name} engine is not available in this daemon`);
  }

  private async engine(name: EngineName): Promise<Engine> {
    this.checkEngine(name);
    return this.deps.engines.load(name);
  }

  /** `teardowns`: the teardown count the caller saw when it decided to launch (a later stop or delete cancels it) */
  private async launch(row: SessionRow, engine: Engine, teardowns = this.teardowns.get(row.name) ?? 0): Promise<void> {
    // a proxy stored under a looser URL policy is refused here rather than retried forever by the reconnect loop
    if (row.proxy) checkProxyUrl(row.proxy, this.deps.urlPolicy);
    const auth = this.deps.authState.forSession(row.name);
    const identities = this.deps.identities?.forSession(row.name);
    const [knownIdentities, reason] = await Promise.all([identities?.load(), this.connectingReason(row.name)]);
    // started meanwhile by another call (the caller checked before its reads), or stopped, deleted or shut down meanwhile
    if (this.runtimes.has(row.name) || this.stopping || (this.teardowns.get(row.name) ?? 0) !== teardowns) return;
    const runtime: Runtime = { failures: 0 } as Runtime;
    runtime.engine = engine.createSession({
      name: row.name,
      proxy: row.proxy ?? undefined,
      urlPolicy: this.deps.urlPolicy,
      config: row.config,
      auth,
      ...(identities ? { identities, knownIdentities: knownIdentities ?? [] } : {}),
      hooks: {
        connection: (update) => {
          if (this.runtimes.get(row.name) !== runtime) return;
          try {
            this.onConnection(row.name, runtime, update);
          } catch (err) {
            this.connectionUpdateFailed(row.name, runtime, err);
          }
        },
        event: (type, payload) => {
          if (this.runtimes.get(row.name) !== runtime) return;
          try {
            this.emit(row.name, type, payload);
          } catch (err) {
            // the store is out of reach: this event is lost, the session and the process go on
            this.deps.logger.error({ err, session: row.name, event: type }, 'could not record an engine event');
          }
        },
        committed: (alsoWrite) => this.committed(row.name, alsoWrite),
        decryption: (signal) => {
          if (this.runtimes.get(row.name) !== runtime) return;
          this.decryption.record(row.name, signal);
          for (const listener of this.decryptionListeners) listener(row.name, signal);
        },
      },
      lookupMessage: async (id, chatId) => this.messageLookup?.(row.name, id, chatId),
      ...(this.messageExists ? { messageStored: (id: string) => this.messageExists!(row.name, id) } : {}),
    });
    this.runtimes.set(row.name, runtime);
    this.decryption.open(row.name);
    this.setStatus(row.name, 'CONNECTING', reason);
    await this.connect(row.name, runtime);
  }

  /** A session starts waiting for a QR scan unless it has credentials (once a clearing of them under way is done). */
  private async connectingReason(name: string): Promise<StatusReason | null> {
    await this.clearing.get(name)?.catch(() => undefined);
    return (await this.deps.authState.forSession(name).isEmpty()) ? 'SCAN_QR' : null;
  }

  /** Deletes the session's credentials; a launch of the session meanwhile reads them after. */
  private clearCredentials(name: string): Promise<void> {
    const cleared = this.deps.authState.forSession(name).clear();
    const tracked = cleared.catch(() => undefined);
    this.clearing.set(name, tracked);
    void tracked.then(() => {
      if (this.clearing.get(name) === tracked) this.clearing.delete(name);
    });
    return cleared;
  }

  private async connect(name: string, runtime: Runtime): Promise<void> {
    // a failure reported to an earlier socket must not abort the first confirmation of this one
    this.storeFailures.delete(name);
    this.uncheckedEvents.delete(name);
    try {
      await runtime.engine.connect();
    } catch (err) {
      this.deps.logger.warn({ err, session: name }, 'engine connect failed');
      try {
        this.onConnection(name, runtime, { kind: 'close', reason: 'AUTO_RECONNECT', detail: (err as Error).message, cause: { code: 'NETWORK_LOST', message: `connect failed: ${(err as Error).message}` } });
      } catch (failure) {
        this.connectionUpdateFailed(name, runtime, failure);
      }
    }
  }

  private onConnection(name: string, runtime: Runtime, update: ConnectionUpdate): void {
    switch (update.kind) {
      case 'qr':
        runtime.qr = { qr: update.qr, expiresAt: update.expiresAt };
        this.setStatus(name, 'CONNECTING', 'SCAN_QR');
        this.emit(name, 'session.qr', { qr: update.qr, expiresAt: update.expiresAt });
        return;
      case 'open':
        runtime.qr = undefined;
        runtime.failures = 0;
        this.deps.sessions.setAccount(name, update.account);
        this.setStatus(name, 'CONNECTED', null);
        this.emit(name, 'session.connected', { ...update.account });
        return;
      case 'close': {
        runtime.qr = undefined;
        const lastError = this.recordCause(name, update);
        if (update.credentialsCleared) {
          // the engine has let them go already; the store follows (durably, so not waited for here)
          this.clearCredentials(name).catch((err: unknown) => this.connectionUpdateFailed(name, runtime, err));
          this.deps.sessions.setAccount(name, null);
        }
        if (TERMINAL_REASONS.has(update.reason)) {
          this.forget(name, runtime);
          // a FAILED session stays this node's (it should run, and runs again at a start or a restart); others are given up
          if (update.reason !== 'FAILED') this.placement.release(name).catch((err: unknown) => this.deps.logger.warn({ err, session: name }, 'could not give the lease up'));
          if (update.reason !== 'FAILED') this.deps.sessions.setShouldRun(name, false);
          this.setStatus(name, 'DISCONNECTED', update.reason, lastError);
          if (update.reason === 'LOGGED_OUT') this.emit(name, 'session.logged_out', { reason: 'UNLINKED', detail: update.detail });
          return;
        }
        this.scheduleReconnect(name, runtime, update.reason, lastError);
        return;
      }
    }
  }

  /** Stores why the connection went down (kept after a reconnect, replaced by the next failure) and logs it. */
  private recordCause(name: string, update: Extract<ConnectionUpdate, { kind: 'close' }>): LastError {
    const cause = update.cause ?? { code: CAUSE_OF_REASON[update.reason], message: update.detail ?? update.reason };
    const lastError: LastError = withLogoutReason({ ...cause, at: new Date().toISOString() });
    try {
      this.deps.sessions.setLastError(name, cause, lastError.at);
    } catch (err) {
      // a store that cannot commit must not stop the reconnect (WhatsApp redelivers once it commits again)
      this.deps.logger.warn({ err, session: name }, 'the cause of the close could not be stored');
    }
    this.deps.logger.info({ session: name, reason: update.reason, cause: cause.code, error: cause.message }, 'connection closed');
    return lastError;
  }

  private scheduleReconnect(name: string, runtime: Runtime, reason: StatusReason, lastError: LastError): void {
    runtime.failures += 1;
    const { settings, logger } = this.deps;
    if (runtime.failures > settings.reconnectMaxAttempts) {
      // FAILED: it stays this node's, as above
      this.forget(name, runtime);
      this.setStatus(name, 'DISCONNECTED', 'FAILED', lastError);
      logger.warn({ session: name, attempts: runtime.failures - 1, cause: lastError.code, error: lastError.message }, 'giving up reconnecting');
      return;
    }
    const delay = reconnectDelayMs(settings, runtime.failures);
    for (const listener of this.reconnectListeners) listener(runtime.engine.engine, reason);
    this.setStatus(name, reason === 'STREAM_ERROR' ? 'DISCONNECTED' : 'CONNECTING', reason, lastError);
    logger.info({ session: name, attempt: runtime.failures, delayMs: delay, reason, cause: lastError.code }, 'reconnecting');
    runtime.reconnectTimer = setTimeout(() => {
      runtime.reconnectTimer = undefined;
      if (this.runtimes.get(name) !== runtime) return;
      try {
        this.setStatus(name, 'CONNECTING', 'AUTO_RECONNECT');
      } catch (err) {
        return this.connectionUpdateFailed(name, runtime, err);
      }
      void this.connect(name, runtime);
    }, delay);
  }

  /**
   * A connection update could not be recorded (the store is out of reach): what the store says of the session is no
   * longer true. On one daemon it is logged and the session goes on; in a cluster the session is given up here, and
   * adopted again (by this node or another) once the database answers, from its stored credentials.
   */
  private connectionUpdateFailed(name: string, runtime: Runtime, err: unknown): void {
    this.deps.logger.error({ err, session: name }, 'could not record a change of the connection');
    if (this.placement === HERE || this.runtimes.get(name) !== runtime) return;
    this.teardown(name).catch((failure: unknown) => this.deps.logger.warn({ err: failure, session: name }, 'could not give the lease up'));
  }

  /** Detaches the runtime so its late callbacks are ignored; does not touch the network. */
  private forget(name: string, runtime: Runtime): void {
    if (runtime.reconnectTimer) clearTimeout(runtime.reconnectTimer);
    if (this.runtimes.get(name) !== runtime) return;
    this.runtimes.delete(name);
    this.storeFailures.delete(name);
    this.uncheckedEvents.delete(name);
  }

  /** Stops the session here; `release`: and gives its lease up (once disconnected: no two nodes hold its socket at once). */
  private async teardown(name: string, release = true): Promise<boolean> {
    // a launch still reading the store must not start the session after this
    this.teardowns.set(name, (this.teardowns.get(name) ?? 0) + 1);
    const runtime = this.runtimes.get(name);
    if (runtime) {
      this.forget(name, runtime);
      await runtime.engine.disconnect().catch((err: unknown) => this.deps.logger.warn({ err, session: name }, 'engine disconnect failed'));
    }
    // also without a runtime: a lease held with nothing running here (never started whole) is given back by a stop
    if (release) await this.placement.release(name);
    return runtime !== undefined;
  }

  /**
   * Stages the change and publishes it (synchronously: in order with the events around it); nothing when the session
   * already has that status. `lastError` goes into the event when the change was caused by a failure.
   */
  private setStatus(name: string, status: SessionStatus, reason: StatusReason | null, lastError?: LastError): void {
    const before = this.statuses.get(name);
    if (!before) {
      // never read by this manager (every caller reads the row or launched the session first): read, then change
      void this.find(name)
        .then((row) => row && this.setStatus(name, status, reason, lastError))
        .catch((err: unknown) => this.deps.logger.warn({ err, session: name, status, reason }, 'the session status could not be stored'));
      return;
    }
    if (before.status === status && before.statusReason === reason) return;
    try {
      this.storeStatus(name, status, reason);
    } catch (err) {
      this.deps.logger.warn({ err, session: name, status, reason }, 'the session status could not be stored');
      return;
    }
    this.health.statusChanged(name, status, this.runtimes.has(name));
    this.emit(name, 'session.status', { status, statusReason: reason, previousStatus: before.status, previousStatusReason: before.statusReason, ...(lastError ? { lastError } : {}) });
  }

  /**
   * The statuses this manager knows, written again a moment after a tick was lost: a status change is staged and nobody
   * waits for it, so one lost with its tick (a row lock held past the lock timeout, the database restarting) would
   * leave the store telling another status until the next change, which may never come. On one daemon every session's;
   * in a cluster only those running here (another node may have written the others since). A rewrite lost too
   * schedules the next.
   */
  rewriteStatuses(): void {
    if (this.statusRewrite || this.stopping) return;
    this.statusRewrite = setTimeout(() => {
      this.statusRewrite = undefined;
      for (const [name, current] of this.statuses) {
        if (this.placement !== HERE && !this.runtimes.has(name)) continue;
        try {
          this.deps.sessions.setStatus(name, current.status, current.statusReason);
        } catch (err) {
          this.deps.logger.warn({ err, session: name }, 'the session status could not be stored');
        }
      }
    }, STATUS_REWRITE_DELAY_MS);
    this.statusRewrite.unref();
  }

  /** Stages a status without an event. */
  private storeStatus(name: string, status: SessionStatus, reason: StatusReason | null): void {
    this.deps.sessions.setStatus(name, status, reason);
    this.statusWrites += 1;
    this.statuses.set(name, { status, statusReason: reason });
  }

  /**
   * Keeps what a read found, unless what this manager knows is newer: it wrote a status since the read began
   * (`writesBefore`), or the session runs here (this node alone writes its status, and a read from another connection
   * may not see a write not yet committed).
   */
  private noteStatus(row: SessionRow, writesBefore: number): void {
    if (this.statuses.has(row.name) && (this.runtimes.has(row.name) || this.statusWrites !== writesBefore)) return;
    this.statuses.set(row.name, { status: row.status, statusReason: row.statusReason });
  }

  /**
   * Runs the processors and publishes; events of a session wait behind one that is still being processed. An event
   * that cannot be stored is logged and remembered for hooks.committed, never thrown at the engine.
   */
  private emit(name: string, type: EventType, payload: Record<string, unknown>): void {
    this.noteUnchecked(name);
    const failed = (err: unknown) => {
      if (!this.storeFailures.has(name)) this.storeFailures.set(name, err);
      this.deps.logger.error({ err, session: name, event: type }, 'event processing failed');
    };
    const waiting = this.inProcess.get(name);
    let pending: Promise<void> | undefined;
    try {
      pending = waiting ? waiting.then(() => this.process(name, type, payload, 0)) : this.process(name, type, payload, 0);
    } catch (err) {
      failed(err);
      return;
    }
    if (!pending) return;
    const tracked = pending.catch(failed);
    this.inProcess.set(name, tracked);
    void tracked.then(() => {
      if (this.inProcess.get(name) === tracked) this.inProcess.delete(name);
    });
  }

  /**
   * hooks.committed: once the session's events reported so far are processed, runs `alsoWrite` (in the tick of their
   * last writes, or after it has committed) and settles when all of it is committed; rejects when one of those events
   * could not be stored, writing nothing of `alsoWrite` then.
   */
  private async committed(name: string, alsoWrite?: () => Promise<void> | undefined | void): Promise<void> {
    // what this check covers is the events reported so far: one reported while it waits has a tick of its own to check
    const ticks = this.deps.ticks;
    const since = this.uncheckedEvents.get(name)?.since ?? ticks?.mark();
    const emittedBefore = this.emitted;
    const checkedFrom = ticks?.mark();
    await this.inProcess.get(name);
    const failure = this.storeFailures.get(name);
    if (failure !== undefined) {
      this.storeFailures.delete(name);
      throw failure;
    }
    if (!ticks || since === undefined || checkedFrom === undefined) {
      await alsoWrite?.();
      return;
    }
    try {
      // a fenced write (a cluster) is checked inside the tick: its failure rejects, whatever the tick does
      const written = alsoWrite ? ticks.writeAfter(since, alsoWrite) : undefined;
      await Promise.all([written, Promise.resolve().then(() => ticks.committedSince(since))]);
    } finally {
      // checked (a failure ends the connection that depended on those events): later checks start after them
      const unchecked = this.uncheckedEvents.get(name);
      if (unchecked && unchecked.emitted <= emittedBefore) this.uncheckedEvents.delete(name);
      else if (unchecked) unchecked.since = Math.max(unchecked.since, checkedFrom);
    }
  }

  private noteUnchecked(name: string): void {
    if (!this.deps.ticks) return;
    this.emitted += 1;
    const unchecked = this.uncheckedEvents.get(name);
    if (unchecked) unchecked.emitted = this.emitted;
    else this.uncheckedEvents.set(name, { since: this.deps.ticks.mark(), emitted: this.emitted });
  }

  /** Synchronous while every processor is; returns a promise from the first one that is not. */
  private process(name: string, type: EventType, payload: Record<string, unknown>, from: number): Promise<void> | undefined {
    for (let i = from; i < this.processors.length; i += 1) {
      const verdict = this.processors[i]!(name, type, payload);
      if (verdict instanceof Promise) {
        return verdict.then((v) => (v === false ? undefined : this.process(name, type, payload, i + 1)));
      }
      if (verdict === false) return undefined;
    }
    this.deps.bus.emit(name, type, payload);
    return undefined;
  }
}
