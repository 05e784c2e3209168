// Keeps this node's session leases: renews them on a timer, and stops a session (onLost) as soon as its lease may no
// longer be this node's: another node was asked to take it, it expired, or renewals failed for so long that the lease
// could expire. That last deadline is measured on this node's monotonic clock from the start of the last renewal that
// succeeded, and falls `margin` before the database may hand the session to another node: a node cut off from the
// database stops its sessions before anyone else may start them.
// What that rests on: onLost finishes stopping a session within the margin (less the watchdog's period); the database's
// clock does not jump forward; and this process is not paused for longer than the margin (a paused process is kept from
// writing over the new owner only by the epoch its writes carry, see LeasesRepo.fence).
import type { LeasesRepo } from '../store/leases.js';

export type LossReason = 'moved' | 'expired' | 'unreachable';

export interface LeaseKeeperOptions {
  repo: LeasesRepo;
  /** the lease length the repository grants (cluster.leaseSeconds) */
  leaseMs: number;
  /** how often leases are renewed; a third of the lease by default */
  renewEveryMs?: number;
  /** must stop the session; a lease lost to a move is handed over once this returns */
  onLost(session: string, reason: LossReason): void | Promise<void>;
  /**
   * resolves once this node's own store answers (within `timeoutMs`): leases are renewed only then, so a node whose
   * statements cannot run lets its sessions go to a node whose can (a renewal runs on connections of its own)
   */
  probe?(timeoutMs: number): Promise<void>;
  /** told when a renewal or a hand-over fails (the database is unreachable, …) or onLost throws; the keeper goes on */
  onError?(err: unknown): void;
  clock?: () => number;
}

interface Held {
  epoch: number;
  /** local clock time by which the session must be stopped unless a renewal succeeds */
  deadline: number;
  /** local clock time the lease was taken: a renewal sent before it cannot have seen it */
  takenAt: number;
}

export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private readonly clock: () => number;
  private readonly renewEveryMs: number;
  /** how long before the earliest possible takeover this node stops a session it cannot renew */
  readonly marginMs: number;
  private renewTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.clock = options.clock ?? (() => performance.now());
    this.renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(options.leaseMs / 3));
    this.marginMs = Math.max(Math.floor(options.leaseMs / 5), 2 * this.watchdogEveryMs());
    if (this.renewEveryMs + this.marginMs >= options.leaseMs) throw new Error(`leases of ${options.leaseMs} ms cannot be renewed every ${this.renewEveryMs} ms with a ${this.marginMs} ms margin`);
  }

  start(): void {
    if (this.renewTimer) return;
    this.renewTimer = setInterval(() => void this.renew(), this.renewEveryMs);
    this.watchdog = setInterval(() => this.enforceDeadlines(), this.watchdogEveryMs());
    this.renewTimer.unref();
    this.watchdog.unref();
  }

  /** Stops renewing; the leases still held expire by themselves unless released. */
  stop(): void {
    clearInterval(this.renewTimer);
    clearInterval(this.watchdog);
    this.renewTimer = undefined;
    this.watchdog = undefined;
  }

  /** Takes the lease of `session` if no other node holds it; its epoch (writes of the session carry it), or undefined. */
  async acquire(session: string): Promise<number | undefined> {
    const current = this.held.get(session);
    if (current) return current.epoch;
    const started = this.clock();
    const epoch = await this.options.repo.acquire(session);
    if (epoch !== undefined) this.held.set(session, { epoch, deadline: started + this.options.leaseMs - this.marginMs, takenAt: this.clock() });
    return epoch;
  }

  /** Gives the lease of a session stopped here back, so that any node may take it at once. */
  async release(session: string): Promise<void> {
    const held = this.held.get(session);
    if (!held) return;
    this.held.delete(session);
    await this.options.repo.release(session, held.epoch);
  }

  heldCount(): number {
    return this.held.size;
  }

  epochOf(session: string): number | undefined {
    return this.held.get(session)?.epoch;
  }

  /** One renewal (also run by the timer); sessions it did not renew are lost. Never throws. */
  renew(): Promise<void> {
    return (this.renewing ??= this.renewOnce().finally(() => (this.renewing = undefined)));
  }

  private async renewOnce(): Promise<void> {
    const started = this.clock();
    const held = [...this.held].map(([session, lease]) => ({ session, epoch: lease.epoch }));
    // a renewal that hangs (a connection dropped without a word) must not hold up the next one past the margin
    const budget = this.options.leaseMs - this.renewEveryMs - this.marginMs;
    let timer: NodeJS.Timeout | undefined;
    let result: Awaited<ReturnType<LeasesRepo['heartbeat']>>;
    let late = false;
    const probe = this.options.probe;
    const renewal = probe
      ? probe(budget).then(() => {
          // the store answered after the budget ran out: these leases are being stopped, they are not renewed
          if (late) throw new Error('the store answered too late to renew the leases');
          return this.options.repo.heartbeat(held, budget);
        })
      : this.options.repo.heartbeat(held, budget);
    try {
      result = await Promise.race([
        renewal,
        new Promise<never>((_, fail) => (timer = setTimeout(() => ((late = true), fail(new Error(`renewing the leases took over ${budget} ms`))), budget))),
      ]);
    } catch (err) {
      this.options.onError?.(err);
      this.enforceDeadlines();
      return;
    } finally {
      clearTimeout(timer);
    }
    const renewed = new Map(result.renewed.map((lease) => [lease.session, lease.epoch]));
    const moving = new Map(result.moving.map((lease) => [lease.session, lease.epoch]));
    const losses: Array<Promise<void>> = [];
    for (const [session, held] of [...this.held]) {
      if (held.takenAt >= started) continue;
      if (renewed.get(session) === held.epoch) held.deadline = started + this.options.leaseMs - this.marginMs;
      else if (moving.get(session) === held.epoch) losses.push(this.lose(session, 'moved', true));
      else losses.push(this.lose(session, 'expired', false));
    }
    this.enforceDeadlines();
    await Promise.all(losses);
  }

  private enforceDeadlines(): void {
    const now = this.clock();
    for (const [session, held] of this.held) if (now >= held.deadline) void this.lose(session, 'unreachable', false);
  }

  /**
   * Forgets the lease at once (no renewal touches it again), has the session stopped, then gives the lease up: handed
   * over to a move's target, or released (a no-op if another node took it meanwhile). Never throws.
   */
  private async lose(session: string, reason: LossReason, handOver: boolean): Promise<void> {
    const held = this.held.get(session);
    if (!held) return;
    this.held.delete(session);
    try {
      await this.options.onLost(session, reason);
      if (handOver) await this.options.repo.handOver(session, held.epoch);
      else await this.options.repo.release(session, held.epoch);
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private watchdogEveryMs(): number {
    return Math.max(10, Math.min(250, Math.floor(this.options.leaseMs / 20)));
  }
}
