// Which tick a request's writes went into, and whether any of them was lost: what an answer checks before it says 2xx.
/** The ticks counted, and the newest one whose writes were lost: what `mark` and `committedSince` read. */
export class TickLedger {
  /** ticks opened so far; the open one, if any, is number `opened` */
  opened = 0;
  private lost: { tick: number; err: unknown } | undefined;

  mark(open: boolean): number {
    return open ? this.opened : this.opened + 1;
  }

  recordLost(tick: number, err: unknown): void {
    if (!this.lost || tick > this.lost.tick) this.lost = { tick, err };
  }

  /** Settles (or, with nothing to wait for, returns at once) when `pending` has; throws if a tick from `mark` on was lost. */
  committedSince(mark: number, pending: Promise<void> | undefined): Promise<void> | undefined {
    if (pending) return pending.then(() => this.refuseIfLostSince(mark));
    this.refuseIfLostSince(mark);
    return undefined;
  }

  /**
   * TickTransaction.writeAfter: `earlier` is the commit to wait for before `write` runs (undefined: none), `committed`
   * the pending commit once `write` has run.
   */
  writeAfter(mark: number, earlier: Promise<void> | undefined, write: () => Promise<void> | undefined | void, committed: () => Promise<void> | undefined): Promise<void> | undefined {
    const run = () => {
      this.refuseIfLostSince(mark);
      const written = write();
      const commit = committed();
      return written || commit ? Promise.all([written, commit]).then(() => undefined) : undefined;
    };
    return earlier ? earlier.then(run) : run();
  }

  private refuseIfLostSince(mark: number): void {
    if (this.lost && this.lost.tick >= mark) throw this.lost.err;
  }
}
