// The tick transaction on PostgreSQL (store.kind: postgres), the counterpart of createTickTransaction in db.ts: the writes
// a tick makes are gathered as they are made (the callers stay synchronous) and go out on the next setImmediate as one
// transaction, every statement pipelined on one connection (postgres.js sends them before the first answer returns).
// Ticks commit one after another, in order: a later tick's writes never overtake an earlier one's. A write is not
// visible to reads until its tick commits; `committed` lets an answer wait for that.
import type { PgSql } from './postgres.js';

export interface PgTickTransaction {
  /** adds a statement (`$1…` parameters) to this tick's transaction */
  write(text: string, params: readonly unknown[]): void;
  /** settles once the writes made so far are committed (rejects if the tick holding them was rolled back); undefined when none are waiting */
  committed(): Promise<void> | undefined;
  /** sends this tick's writes at once; settles when they are committed or lost */
  flush(): Promise<void>;
}

/**
 * @param onLost told when a tick's writes could not be committed (rolled back, every statement of it; the daemon goes on)
 * @param onCommit told how long each commit took, seconds (metrics)
 */
export function createPgTickTransaction(sql: PgSql, onLost: (err: unknown) => void, onCommit?: (seconds: number) => void): PgTickTransaction {
  /** this tick's statements, and the promise its waiters hold */
  let open: { statements: Array<[string, readonly unknown[]]>; committed: Promise<void>; done(): void; fail(err: unknown): void } | undefined;
  /** the commit of the last tick sent (it never rejects: a lost tick tells its own waiters and onLost) */
  let tail: Promise<void> = Promise.resolve();
  /** that commit while it is under way */
  let inFlight: Promise<void> | undefined;

  const flush = (): Promise<void> => {
    if (!open) return inFlight ?? Promise.resolve();
    const tick = open;
    open = undefined;
    const sent = (tail = tail.then(async () => {
      const started = performance.now();
      try {
        await sql.begin((tx) => tick.statements.map(([text, params]) => tx.unsafe(text, params as never[])));
        onCommit?.((performance.now() - started) / 1000);
        tick.done();
      } catch (err) {
        tick.fail(err);
        onLost(err);
      }
    }));
    inFlight = sent;
    void sent.then(() => {
      if (inFlight === sent) inFlight = undefined;
    });
    return sent;
  };

  return {
    write(text, params) {
      if (!open) {
        let settle!: { done(): void; fail(err: unknown): void };
        const committed = new Promise<void>((done, fail) => (settle = { done, fail }));
        // an answer that never waits for these writes must not leave an unhandled rejection behind
        committed.catch(() => {});
        open = { statements: [], committed, ...settle };
        setImmediate(flush);
      }
      open.statements.push([text, params]);
    },
    committed: () => open?.committed ?? inFlight,
    flush,
  };
}
