// The webhook outbox: an EventBus persister that writes one delivery row per matching enabled webhook before anyone hears of
// the event (past what one tick may write, the event once with its webhooks, whose rows fanout.ts writes after).
import { randomUUID } from 'node:crypto';
import type { GatewayEvent } from '../events/catalogue.js';
import type { EventPersister } from '../events/bus.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { NewDelivery, OutboxRepo } from '../store/outbox.js';
import { sealedQrPayload } from './pairing-qr.js';
import type { FanoutExpander } from './fanout.js';
import type { WebhookRegistry } from './registry.js';

/** delivery rows one tick's events may write themselves; beyond, events are fanned out from the store (fanout.ts) */
const TICK_ROWS = 250;

export interface OutboxOptions {
  registry: WebhookRegistry;
  outbox: OutboxRepo;
  /** seals what deliveries must not hold in plaintext at rest (a pairing QR) */
  box: SecretBox;
  /** told of the rows just written (the dispatcher wakes and takes them) */
  onWritten?: (deliveries: readonly NewDelivery[]) => void;
  /** takes the events one tick has no room for; without it, every event writes its rows at once */
  fanout?: Pick<FanoutExpander, 'add' | 'waiting'>;
  tickRows?: number;
}

/**
 * The envelope of DESIGN §3, `{id, event, session, seq, timestamp, payload}`, as the exact JSON that is stored and sent:
 * the payload is serialised once per event and each delivery's body is built around it with its own id. `seq` is the
 * event's number in its session's log, so a receiver can tell it missed nothing.
 */
export function envelopeJson(
  deliveryId: string,
  event: { event: string; session: string; seq: number; timestamp: string; payload?: unknown },
  payloadJson = JSON.stringify(event.payload ?? {}),
): string {
  return (
    `{"id":${JSON.stringify(deliveryId)},"event":${JSON.stringify(event.event)},"session":${JSON.stringify(event.session)},` +
    `"seq":${event.seq},"timestamp":${JSON.stringify(event.timestamp)},"payload":${payloadJson}}`
  );
}

/**
 * A time-ordered UUID (version 7 layout: 48-bit ms timestamp, then random bits), so new delivery ids append to the
 * primary-key index instead of landing on random pages (fewer pages written per commit).
 */
export function deliveryId(now = Date.now()): string {
  const random = randomUUID();
  const ts = now.toString(16).padStart(12, '0');
  return `${ts.slice(0, 8)}-${ts.slice(8, 12)}-7${random.slice(15, 18)}${random.slice(18)}`;
}

export function createOutbox({ registry, outbox, box, onWritten, fanout, tickRows = TICK_ROWS }: OutboxOptions): EventPersister {
  let writtenThisTick = 0;
  return function persistToOutbox(event: GatewayEvent): void {
    const targets = registry.matching(event.event, event.session);
    if (targets.length === 0) return;
    const payloadJson = JSON.stringify(event.event === 'session.qr' ? sealedQrPayload(box, event.payload) : (event.payload ?? {}));
    const now = Date.now();
    if (fanout && (fanout.waiting || writtenThisTick + targets.length > tickRows)) {
      const webhookIds = targets.map((webhook) => webhook.id);
      fanout.add({ eventId: event.id, event: event.event, session: event.session, seq: event.seq, timestamp: event.timestamp, payload: payloadJson, webhookIds }, now);
      return;
    }
    if (writtenThisTick === 0) setImmediate(() => (writtenThisTick = 0));
    writtenThisTick += targets.length;
    const deliveries: NewDelivery[] = targets.map((webhook) => {
      const id = deliveryId(now);
      return { id, webhookId: webhook.id, eventId: event.id, event: event.event, session: event.session, body: envelopeJson(id, event, payloadJson) };
    });
    const written = outbox.recordEvent(deliveries, now);
    // inside the tick (the bus joins it first) the rows are staged at once; outside, they are written in a transaction
    // of their own, and the dispatcher hears of them once it has committed (a failure is the process's unhandled rejection)
    if (written) void written.then(() => onWritten?.(deliveries));
    else onWritten?.(deliveries);
  };
}
