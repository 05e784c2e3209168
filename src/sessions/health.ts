// The health of every session running here: one watchdog per session from its first CONNECTED on, told of its status
// changes by the session manager, and what the session resource shows of it (`health`, `lastFrameAt`).
import type { SessionStatus } from '../engine/types.js';
import { Watchdog, type Connection, type Health, type HealthReport, type HealthSettings } from './watchdog.js';

export interface HealthDeps {
  /** absent: no watchdog runs (sessions.health.silenceSeconds 0) */
  settings: HealthSettings | undefined;
  /** the session's engine session while it is CONNECTED */
  connection(name: string): Connection | undefined;
  restart(name: string): Promise<void>;
  report(name: string, report: HealthReport): void;
}

export interface HealthView {
  /** null when the session is not CONNECTED here (or no watchdog runs), unless a step of the watchdog is under way */
  health: Health | null;
  /** ISO 8601; null when no frame came on a connection of this daemon */
  lastFrameAt: string | null;
}

export class SessionHealth {
  private readonly watchdogs = new Map<string, Watchdog>();

  constructor(private readonly deps: HealthDeps) {}

  /** `running`: the session still runs here (a stop, a logout or a terminal close ends its watchdog). */
  statusChanged(name: string, status: SessionStatus, running: boolean): void {
    if (!running) return this.forget(name);
    if (status === 'CONNECTED') this.watchdog(name)?.connected();
    else this.watchdogs.get(name)?.disconnected();
  }

  forget(name: string): void {
    this.watchdogs.get(name)?.stop();
    this.watchdogs.delete(name);
  }

  stopAll(): void {
    for (const name of [...this.watchdogs.keys()]) this.forget(name);
  }

  view(name: string): HealthView {
    const watchdog = this.watchdogs.get(name);
    const at = watchdog ? watchdog.lastFrameAt : this.deps.connection(name)?.lastFrameAt();
    return { health: watchdog?.health ?? null, lastFrameAt: at === undefined ? null : new Date(at).toISOString() };
  }

  degradedCount(): number {
    let count = 0;
    for (const watchdog of this.watchdogs.values()) if (watchdog.health === 'degraded') count += 1;
    return count;
  }

  private watchdog(name: string): Watchdog | undefined {
    const settings = this.deps.settings;
    if (!settings) return undefined;
    let watchdog = this.watchdogs.get(name);
    if (!watchdog) {
      watchdog = new Watchdog(
        {
          connection: () => this.deps.connection(name),
          restart: () => this.deps.restart(name),
          report: (report) => this.deps.report(name, report),
        },
        settings,
      );
      this.watchdogs.set(name, watchdog);
    }
    return watchdog;
  }
}
