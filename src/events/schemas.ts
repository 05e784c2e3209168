// JSON Schemas (draft 2020-12) of the event envelope and of each event's payload: the contract behind docs/EVENTS.md.
// Placeholder with the interface the OpenAPI builder needs; the full payload schemas come with the events work.
import { EVENT_TYPES, type EventType } from './catalogue.js';

export const eventEnvelopeSchema = {
  type: 'object',
  required: ['id', 'event', 'session', 'timestamp', 'payload'],
  properties: {
    id: { type: 'string', description: 'the delivery id on webhooks (stable across retries); the event id on the event stream' },
    event: { type: 'string', enum: [...EVENT_TYPES] },
    session: { type: 'string' },
    timestamp: { type: 'string', format: 'date-time' },
    payload: { type: 'object' },
  },
  additionalProperties: false,
} as const;

export const eventPayloadSchemas: Record<EventType, object> = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, { type: 'object', description: `payload of ${type} (see docs/EVENTS.md)` }]),
) as Record<EventType, object>;
