// The tick transaction on PostgreSQL (store.kind: postgres), the counterpart of the SQLite tick in db.ts: the first write of
// a tick opens a transaction on the store's connection, the tick's writes follow it down the pipe without a wait, and on
// the next setImmediate its COMMIT goes out, also without a wait: nothing blocks on a tick's commit, and `committed` lets
// an answer wait for it. Everything on the connection runs in the order it was sent, so a later tick never overtakes an
// earlier one, and a read made after a write sees it.
import type { TickTransaction } from './sql.js';
import { TickLedger } from './tick-ledger.js';
import type { PgDb } from './pg-db.js';

/**
 * @param onLost told when a tick's writes could not be committed (rolled back, every statement of it; the daemon goes on)
 * @param onCommit told how long each commit took from the tick's end, seconds (metrics)
 */
export function createPgTickTransaction(db: PgDb, onLost: (err: unknown) => void, onCommit?: (seconds: number) => void): TickTransaction {
  /** the open tick's commit, which its waiters hold */
  let open: { committed: Promise<void>; done(): void; fail(err: unknown): void } | undefined;
  /** the last tick's commit while it is under way (an answer may still wait for it) */
  let inFlight: Promise<void> | undefined;
  const ledger = new TickLedger();

  const flush = () => {
    if (!open) return;
    // an explicit transaction under way is a savepoint of this tick: the tick commits once it has ended
    if (db.turns.busy) return db.turns.whenIdle(flush);
    const tick = open;
    const number = ledger.opened;
    open = undefined;
    const started = performance.now();
    // a tick's outcome is told after the outcome of the one before it (the ledger has its loss by then)
    const before = inFlight;
    inFlight = tick.committed;
    const settled = () => {
      if (inFlight === tick.committed) inFlight = undefined;
    };
    tick.committed.then(settled, settled);
    const outcome = db.commit();
    outcome.catch(() => {}); // told below, possibly after the tick before it settles
    (before ? before.then(() => outcome, () => outcome) : outcome).then(
      () => {
        onCommit?.((performance.now() - started) / 1000);
        tick.done();
      },
      (err: unknown) => {
        ledger.recordLost(number, err);
        tick.fail(err);
        onLost(err);
      },
    );
  };

  const pendingCommit = () => open?.committed ?? inFlight;
  return {
    join() {
      if (open || db.inTransaction) return;
      db.begin();
      ledger.opened += 1;
      let settle!: { done(): void; fail(err: unknown): void };
      const committed = new Promise<void>((done, fail) => (settle = { done, fail }));
      // an answer that never waits for these writes must not leave an unhandled rejection behind
      committed.catch(() => {});
      open = { committed, ...settle };
      setImmediate(flush);
    },
    flush,
    committed: pendingCommit,
    mark: () => ledger.mark(open !== undefined),
    committedSince: (mark) => ledger.committedSince(mark, pendingCommit()),
    // `write` may wait for its turn (a fenced write is a transaction of its own) and so land in a tick after the open
    // one: it runs once the ticks holding what it depends on have committed (a lost one is in the ledger by then)
    writeAfter: (mark, write) => ledger.writeAfter(mark, pendingCommit(), write, pendingCommit),
    abort(err) {
      if (open) db.spoilTransaction(err);
    },
  };
}
