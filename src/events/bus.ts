// In-process event bus: records each event through the registered persisters, then hands it to live subscribers.
import { randomUUID } from 'node:crypto';
import { isoTimestamp } from '../timestamp.js';
import type { EventType, GatewayEvent } from './catalogue.js';

export type EventListener = (event: GatewayEvent) => void;
/** Writes an event durably (the webhook outbox) before anyone hears of it. */
export type EventPersister = (event: GatewayEvent) => void;

export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private readonly persisters: EventPersister[] = [];

  /**
   * @param beforeWrite called before an event is written (joins the tick's transaction)
   * @param numbering gives each event its number in its session's log (EventLog.next); without it every event is 0
   */
  constructor(
    private readonly beforeWrite: () => void = () => {},
    private readonly numbering: (session: string) => number = () => 0,
  ) {}

  addPersister(persister: EventPersister): void {
    this.persisters.push(persister);
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An event another daemon recorded (a cluster's): to the live subscribers only, it is in the shared outbox already. */
  relay(event: GatewayEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // as in emit
      }
    }
  }

  emit<P extends Record<string, unknown>>(session: string, event: EventType, payload: P): GatewayEvent<P> {
    if (this.persisters.length) this.beforeWrite();
    const recorded: GatewayEvent<P> = { id: randomUUID(), event, session, seq: this.numbering(session), timestamp: isoTimestamp(), payload };
    for (const persist of this.persisters) persist(recorded);
    for (const listener of this.listeners) {
      try {
        listener(recorded);
      } catch {
        // a faulty live listener must not stop delivery to the others
      }
    }
    return recorded;
  }
}
