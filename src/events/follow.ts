// Follows the event log for one reader: first what it missed (read from the log, after the positions it resumes from),
// then the events as they commit, without a gap between the two and without an event twice. Events committed while the
// past is read are held and told after it, less the ones the read already gave.
import type { GatewayEvent } from './catalogue.js';
import type { Positions } from './cursor.js';
import type { EventLog } from './log.js';

/** events of the log read at once */
const PAGE = 1000;
/** live events held while the past is read; past this the held ones are dropped and the log read again */
const MAX_HELD = 20_000;

export interface FollowOptions {
  log: Pick<EventLog, 'page' | 'subscribeCommitted' | 'toldNumbers'>;
  /** where the reader resumes; undefined: it starts now, with nothing of the past */
  resumeFrom: Positions | undefined;
  /** the sessions the reader may hear */
  inScope(session: string): boolean;
  /** the event types it wants (all when empty) */
  types: ReadonlySet<string>;
  /**
   * Sends one event with where the reader stands after it. While the past is read (`catchingUp`) it may return a promise
   * that settles once there is room for more; live events are not waited for.
   */
  deliver(event: GatewayEvent, positions: Positions, catchingUp: boolean): void | Promise<void>;
  /** false once the reader has gone */
  isOpen(): boolean;
}

/**
 * Starts following. `done` settles once the past asked for has been sent; `failed` rejects when a read of the log fails
 * (then, or on a later catch-up), which ends the following.
 */
export function followLog(options: FollowOptions): { stop(): void; done: Promise<void>; failed: Promise<never> } {
  const { log, inScope, types } = options;
  const positions: Positions = new Map();
  for (const [session, seq] of options.resumeFrom ?? log.toldNumbers()) if (inScope(session)) positions.set(session, seq);
  let held: GatewayEvent[] | undefined = options.resumeFrom ? [] : undefined;
  let overflowed = false;

  const offer = (event: GatewayEvent, catchingUp: boolean): void | Promise<void> => {
    if (event.seq <= (positions.get(event.session) ?? 0)) return;
    positions.set(event.session, event.seq);
    if (types.size && !types.has(event.event)) return;
    return options.deliver(event, positions, catchingUp);
  };
  const stop = log.subscribeCommitted((event) => {
    if (!inScope(event.session)) return;
    if (!held) {
      const at = positions.get(event.session);
      // a live event beyond the next: those between were not heard (a cluster's relay that dropped them); the log has them
      if (at === undefined || event.seq <= at + 1) return void offer(event, false);
      held = [event];
      return void startCatchUp().catch(() => {});
    }
    if (held.length >= MAX_HELD) {
      overflowed = true;
      held = [];
    }
    held.push(event);
  });

  const catchUp = async (): Promise<void> => {
    while (held) {
      overflowed = false;
      // the sessions it resumes, and those that had events since it started
      const sessions = new Set([...positions.keys(), ...[...log.toldNumbers().keys()].filter(inScope)]);
      for (const session of sessions) {
        for (;;) {
          const envelopes = await log.page(session, positions.get(session) ?? 0, [...types], PAGE);
          for (const envelope of envelopes) {
            if (!options.isOpen()) return;
            await offer(JSON.parse(envelope) as GatewayEvent, true);
          }
          if (envelopes.length < PAGE) break;
        }
      }
      // the events held meanwhile, in the order they committed; more may be held while these are sent
      while (!overflowed && held.length) await offer(held.shift()!, true);
      if (!options.isOpen()) return;
      // held ones were dropped (too many): the log has them
      if (!overflowed) held = undefined;
    }
  };
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  const startCatchUp = () =>
    catchUp().catch((err: unknown) => {
      stop();
      fail(err);
      throw err;
    });
  const done = held ? startCatchUp() : Promise.resolve();
  done.catch(() => {});
  return { stop, done, failed };
}
