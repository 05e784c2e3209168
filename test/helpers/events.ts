// Collects a daemon's events from its Server-Sent Events stream, with waits for the event a test expects.
import type { TestDaemon } from './daemon.js';
import { checkResponse } from './contract.js';
import { checkEventAsync } from './event-contract.js';
import { sseData } from '../../src/events/sse.js';

export interface StreamedEvent {
  id: string;
  event: string;
  session: string;
  timestamp: string;
  payload: any;
}

export interface EventCollector {
  events: StreamedEvent[];
  /** resolves with the first matching event (already received or still to come) */
  next(match: (e: StreamedEvent) => boolean, timeoutMs?: number, what?: string): Promise<StreamedEvent>;
  all(match: (e: StreamedEvent) => boolean): StreamedEvent[];
  close(): void;
}

export async function collectEvents(daemon: TestDaemon, query = ''): Promise<EventCollector> {
  const controller = new AbortController();
  const response = await fetch(`${daemon.url}/api/events/stream${query ? `?${query}` : ''}`, {
    headers: { Authorization: `Bearer ${daemon.masterKey}`, Accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (!response.ok || !response.body) throw new Error(`event stream: HTTP ${response.status}`);
  // the stream's own answer (status, media type, X-Request-Id) must be the documented one too
  checkResponse('GET', response.url, response.status, response.headers, undefined, '');
  const events: StreamedEvent[] = [];
  const waiters = new Set<{ match: (e: StreamedEvent) => boolean; done: (e: StreamedEvent) => void; fail: (error: Error) => void }>();
  const drifts: Error[] = [];
  const checked = <T>(value: T): T => {
    if (drifts.length) throw drifts[0];
    return value;
  };
  void (async () => {
    try {
      for await (const data of sseData(response.body as unknown as AsyncIterable<Uint8Array>)) {
        const event = JSON.parse(data) as StreamedEvent;
        const drift = checkEventAsync(event, 'live stream event');
        if (drift) {
          drifts.push(drift);
          for (const waiter of [...waiters]) waiter.fail(drift);
        }
        events.push(event);
        for (const waiter of [...waiters]) {
          if (waiter.match(event)) {
            waiters.delete(waiter);
            waiter.done(event);
          }
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return {
    events,
    all: (match) => checked(events.filter(match)),
    next(match, timeoutMs = 5000, what = 'event') {
      if (drifts.length) return Promise.reject(drifts[0]);
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((done, fail) => {
        const waiter = {
          match,
          done: (e: StreamedEvent) => {
            clearTimeout(timer);
            done(e);
          },
          fail: (error: Error) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            fail(error);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; saw: ${events.map((e) => `${e.session}:${e.event}`).join(', ')}`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close: () => controller.abort(),
  };
}

/** Opens `GET /api/events/stream` with `key` and keeps it open (its controller goes into `held`); returns the status. */
export async function openEventStream(daemon: TestDaemon, key: string, held: AbortController[]): Promise<number> {
  const controller = new AbortController();
  const res = await fetch(`${daemon.url}/api/events/stream`, { headers: { Authorization: `Bearer ${key}` }, signal: controller.signal });
  if (res.status === 200) held.push(controller);
  else await res.text();
  return res.status;
}
