// The webhook outbox: an EventBus persister that writes one delivery row per matching enabled webhook before anyone hears of the event.
import { randomUUID } from 'node:crypto';
import type { GatewayEvent } from '../events/catalogue.js';
import type { EventPersister } from '../events/bus.js';
import type { NewDelivery, OutboxRepo } from '../store/outbox.js';
import type { WebhookRegistry } from './registry.js';

export interface OutboxOptions {
  registry: WebhookRegistry;
  outbox: OutboxRepo;
  /** told which webhooks got new rows (the dispatcher wakes) */
  onWritten?: (webhookIds: number[]) => void;
}

/**
 * The envelope of DESIGN §3, `{id, event, session, timestamp, payload}`, as the exact JSON that is stored and sent:
 * the payload is serialised once per event and each delivery's body is built around it with its own id.
 */
export function envelopeJson(deliveryId: string, event: GatewayEvent, payloadJson = JSON.stringify(event.payload ?? {})): string {
  return (
    `{"id":${JSON.stringify(deliveryId)},"event":${JSON.stringify(event.event)},"session":${JSON.stringify(event.session)},` +
    `"timestamp":${JSON.stringify(event.timestamp)},"payload":${payloadJson}}`
  );
}

export function createOutbox({ registry, outbox, onWritten }: OutboxOptions): EventPersister {
  return function persistToOutbox(event: GatewayEvent): void {
    const targets = registry.matching(event.event, event.session);
    if (targets.length === 0) return;
    const payloadJson = JSON.stringify(event.payload ?? {});
    const deliveries: NewDelivery[] = targets.map((webhook) => {
      const id = randomUUID();
      return { id, webhookId: webhook.id, eventId: event.id, event: event.event, session: event.session, body: envelopeJson(id, event, payloadJson) };
    });
    outbox.recordEvent(deliveries);
    onWritten?.(targets.map((w) => w.id));
  };
}
