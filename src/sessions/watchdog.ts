// The health watchdog of one session (docs/ENGINES.md "Session health"): a CONNECTED session from which no frame came
// for `silenceMs` (keep-alive answers included) is probed, then reconnected (same credentials, new connection), then
// restarted (stopped and started again, its state read from the store); each step is reported, and so is the recovery.
import type { EngineSession } from '../engine/types.js';

export type Health = 'healthy' | 'degraded';
export type HealthStep = 'probe' | 'reconnect' | 'restart';
/** why a step is taken: the silence itself, or the step before it did not bring frames back */
export type HealthReason = 'silence' | 'probe_failed' | 'reconnect_failed';
export const HEALTH_STEPS: readonly HealthStep[] = ['probe', 'reconnect', 'restart'];
export const HEALTH_REASONS: readonly HealthReason[] = ['silence', 'probe_failed', 'reconnect_failed'];

export interface HealthSettings {
  /** no frame for this long makes a CONNECTED session degraded */
  silenceMs: number;
  /** how long the probe (and the probe after a reconnect or a restart) waits for its answer */
  probeTimeoutMs: number;
  /** how long a reconnect, or a restart, has to bring the session back to CONNECTED before its probe */
  recoverMs: number;
}

/** Each step is taken for one reason: the silence, or the step before it did not bring frames back. */
const REASON_OF_STEP: Record<HealthStep, HealthReason> = { probe: 'silence', reconnect: 'probe_failed', restart: 'reconnect_failed' };

/**
 * One step (`degraded`: the step taken, and why) or a recovery (`recovered`: the step that brought frames back, and the
 * reason it was taken for).
 */
export interface HealthReport {
  state: 'degraded' | 'recovered';
  step: HealthStep;
  reason: HealthReason;
  /** ms since the epoch */
  lastFrameAt: number | undefined;
}

export type Connection = Pick<EngineSession, 'lastFrameAt' | 'probe' | 'reconnect'>;

/** What the watchdog acts on. */
export interface WatchedSession {
  /** the engine session while the session is CONNECTED; undefined otherwise (the engine session changes at a restart) */
  connection(): Connection | undefined;
  /** the session stops and starts again (the session manager); CONNECTED again is told through `connected()` */
  restart(): Promise<void>;
  report(report: HealthReport): void;
}

export class Watchdog {
  private state: Health | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** the steps are running: status changes are theirs (a reconnect, a restart), not news */
  private laddering = false;
  /** the step that ran last: a degraded session that gets frames back was brought back by it */
  private lastStep: HealthStep = 'probe';
  /** bumped by stop(): a ladder under way gives up at its next turn */
  private generation = 0;
  private readonly connectedWaiters = new Set<() => void>();
  /** the last frame any connection of the session had, kept while a step replaces the connection */
  private lastSeen: number | undefined;

  constructor(
    private readonly session: WatchedSession,
    private readonly settings: HealthSettings,
  ) {}

  /** null when the session is not CONNECTED (and no step is running) */
  get health(): Health | null {
    return this.state;
  }

  /** when the session last received a frame (ms since the epoch); undefined before its first connection */
  get lastFrameAt(): number | undefined {
    const at = this.session.connection()?.lastFrameAt();
    if (at !== undefined) this.lastSeen = at;
    return this.lastSeen;
  }

  /** The session became CONNECTED (opened, reconnected by the manager, or restarted). */
  connected(): void {
    for (const waiter of this.connectedWaiters) waiter();
    this.connectedWaiters.clear();
    if (this.laddering) return;
    this.state ??= 'healthy';
    this.watch();
  }

  /** The session left CONNECTED, not by a step: nothing to watch until it is back. */
  disconnected(): void {
    if (this.laddering) return;
    clearTimeout(this.timer);
    this.state = null;
  }

  stop(): void {
    this.generation += 1;
    clearTimeout(this.timer);
    this.state = null;
    this.laddering = false;
    for (const waiter of this.connectedWaiters) waiter();
    this.connectedWaiters.clear();
  }

  /**
   * Wakes up when the silence would reach its limit, counted from the last frame; an engine between two connections of
   * its own (a restart the server asked for) while the session is still CONNECTED is looked at again a silence later.
   */
  private watch(): void {
    clearTimeout(this.timer);
    const connection = this.session.connection();
    // not CONNECTED: connected() starts the watch again
    if (!connection) return;
    const last = connection.lastFrameAt();
    const due = last === undefined ? this.settings.silenceMs : last + this.settings.silenceMs - Date.now();
    this.timer = setTimeout(() => this.check(), Math.max(0, due));
    this.timer.unref?.();
  }

  private check(): void {
    const last = this.session.connection()?.lastFrameAt();
    if (last !== undefined && Date.now() - last >= this.settings.silenceMs) return void this.ladder();
    // frames came back on their own after a restart that did not help
    if (last !== undefined && this.state === 'degraded') this.recovered(this.lastStep);
    this.watch();
  }

  private async ladder(): Promise<unknown> {
    const generation = this.generation;
    const live = () => generation === this.generation;
    const recovered = (step: HealthStep) => live() && this.recovered(step);
    this.laddering = true;
    try {
      this.degraded('probe');
      if (await this.probed()) return recovered('probe');
      if (!live()) return;
      this.degraded('reconnect');
      const connection = this.session.connection();
      if (connection && (await this.recovers(() => connection.reconnect()))) return recovered('reconnect');
      if (!live()) return;
      this.degraded('restart');
      if (await this.recovers(() => this.session.restart())) return recovered('restart');
    } finally {
      if (live()) {
        this.laddering = false;
        // after a restart that did not help the session stays degraded, and the steps start over after another silence
        if (this.session.connection()) this.watch();
      }
    }
  }

  /** The current connection answers a probe in time. */
  private async probed(): Promise<boolean> {
    const connection = this.session.connection();
    if (!connection) return false;
    return settles(connection.probe(this.settings.probeTimeoutMs), this.settings.probeTimeoutMs);
  }

  /** `step` brings the session back to CONNECTED within recoverMs, and the connection then answers a probe. */
  private async recovers(step: () => Promise<void>): Promise<boolean> {
    const deadline = Date.now() + this.settings.recoverMs;
    if (!(await settles(step(), this.settings.recoverMs))) return false;
    if (!this.session.connection() && !(await this.untilConnected(deadline - Date.now()))) return false;
    return this.probed();
  }

  private untilConnected(ms: number): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.connectedWaiters.delete(done);
        resolve(this.session.connection() !== undefined);
      };
      const timer = setTimeout(done, ms);
      timer.unref?.();
      this.connectedWaiters.add(done);
    });
  }

  private degraded(step: HealthStep): void {
    this.state = 'degraded';
    this.lastStep = step;
    this.session.report({ state: 'degraded', step, reason: REASON_OF_STEP[step], lastFrameAt: this.lastFrameAt });
  }

  private recovered(step: HealthStep): void {
    this.state = 'healthy';
    this.session.report({ state: 'recovered', step, reason: REASON_OF_STEP[step], lastFrameAt: this.lastFrameAt });
  }
}

/** Whether `work` resolves within `ms` (a rejection or the time running out: false). */
function settles(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
      timer.unref?.();
    }),
  ]).finally(() => clearTimeout(timer));
}
