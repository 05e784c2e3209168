// The event contract in the tests: every event a test sees (webhook receiver, live stream, CLI tail) is checked against
// src/events/schemas.ts, and a drift fails the test that saw it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { EVENT_TYPES, type EventType } from '../../src/events/catalogue.js';
import { eventEnvelopeSchemaFor, eventEnvelopeSchema } from '../../src/events/schemas.js';
import { resourceSchemas } from '../../src/http/schemas/resources.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }));

// event schemas name the document's resources as `#/components/schemas/X`: outside the document, X is its own schema
const COMPONENT = '#/components/schemas/';
const resourceUri = (name: string) => `urn:gateway:schemas:${name}`;
function outsideDocument(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(outsideDocument);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith(COMPONENT) ? resourceUri(value.slice(COMPONENT.length)) : outsideDocument(value)]),
  );
}
for (const [name, schema] of Object.entries(resourceSchemas)) ajv.addSchema(outsideDocument(schema) as object, resourceUri(name));

const envelope = ajv.compile(outsideDocument(eventEnvelopeSchema) as object);
const byType = new Map<string, ValidateFunction>(EVENT_TYPES.map((type: EventType) => [type, ajv.compile(outsideDocument(eventEnvelopeSchemaFor(type)) as object)]));

export class EventDriftError extends Error {
  override name = 'EventDriftError';
}

/** The drift of an event from its schema, or undefined when it conforms. */
export function eventDrift(event: unknown): string | undefined {
  const validate = byType.get((event as { event?: unknown } | null)?.event as string) ?? envelope;
  if (validate(event)) return undefined;
  const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
  return `${problems.join('; ')}\n  in ${JSON.stringify(event)}`;
}

/** Throws EventDriftError when `event` does not match the envelope and its payload schema. */
export function assertEvent(event: unknown, source = 'event'): void {
  const drift = eventDrift(event);
  if (drift) throw new EventDriftError(`${source} drifts from src/events/schemas.ts: ${drift}`);
}

/** The drift of `event` as an error to throw, or undefined when it conforms. */
export function eventDriftError(event: unknown, source: string): EventDriftError | undefined {
  const drift = eventDrift(event);
  return drift ? new EventDriftError(`${source} drifts from src/events/schemas.ts: ${drift}`) : undefined;
}

/**
 * For helpers that see events on their own (a server callback, a stream reader): they keep what `drifted` returns and
 * throw it from their accessors, so the test that looks at the events fails with it; the drift is also thrown outside
 * their control flow, so node:test fails the file even when no test looks.
 */
export function checkEventAsync(event: unknown, source: string): EventDriftError | undefined {
  const error = eventDriftError(event, source);
  if (error) {
    process.nextTick(() => {
      throw error;
    });
  }
  return error;
}
