// The event log: GET /api/events pages through what a session emitted; GET /api/events/stream sends events as they commit
// over Server-Sent Events, filtered by session and event type, resuming after a cursor (`Last-Event-ID`) without a gap
// or a duplicate (operators, the console, `gateway events tail`).
import { PassThrough } from 'node:stream';
import { ServerBusyError, ValidationError } from '../../errors.js';
import { EVENT_TYPES, isEventType, type GatewayEvent } from '../../events/catalogue.js';
import { CURSOR_PATTERN, formatCursor, parseCursor } from '../../events/cursor.js';
import { eventEnvelopeSchema } from '../../events/schemas.js';
import { followLog } from '../../events/follow.js';
import { QuotaCounter } from '../../quota.js';
import { csvOf, sessionName } from '../schemas/common.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const HEARTBEAT_MS = 15_000;
/**
 * A client that stops reading is dropped once this much waits for it in the stream (beyond the socket's own buffers):
 * enough for a burst of a few hundred events, small enough that maxStreams idle readers cannot take the memory.
 */
const MAX_BUFFERED_BYTES = 256 * 1024;
/** streams only the master key may open, whatever the others hold */
export const STREAM_MASTER_RESERVE = 4;

const eventTypesCsv = { type: 'string', maxLength: 2000, pattern: csvOf(['*', ...EVENT_TYPES]), 'x-csv-of': ['*', ...EVENT_TYPES], 'x-invalid-message': 'must be a comma list of event types (or *)' } as const;

/** the event types a comma list names; empty for all */
function typesOf(list: string | undefined, field: string): Set<string> {
  const wanted = list ? list.split(',').map((e) => e.trim()).filter(Boolean) : [];
  const unknown = wanted.filter((e) => e !== '*' && !isEventType(e));
  if (unknown.length) throw ValidationError.field(field, `unknown event types: ${unknown.join(', ')}`);
  return wanted.includes('*') ? new Set() : new Set(wanted);
}


export function eventRoutes({ eventLog, apiKeys, config }: Services, streams: Set<PassThrough>): RouteDef[] {
  const places = new QuotaCounter({ max: config.events.maxStreams, perPrincipal: config.events.maxStreamsPerKey, masterReserve: STREAM_MASTER_RESERVE }, 'event streams');
  return [
    {
      method: 'GET',
      path: '/api/events',
      operationId: 'listEvents',
      responses: {
        200: {
          data: {
            type: 'object',
            required: ['events', 'nextAfter', 'hasMore'],
            properties: {
              events: { type: 'array', items: eventEnvelopeSchema },
              nextAfter: { type: 'integer', minimum: 0, description: 'the `after` of the next page: the number of the last event listed (or the `after` asked, when none was)' },
              hasMore: { type: 'boolean', description: 'more events may follow: ask again with `after=nextAfter`' },
            },
          },
          description: "a page of the session's event log, oldest first",
        },
      },
      access: 'webhooks:manage',
      sessionFrom: ({ query }) => (query as { session?: string }).session,
      summary: "a session's events after a number, oldest first (query: session, after, types as a comma list, limit)",
      description:
        'Every event a session emits is numbered 1, 2, 3 … (`seq`) and kept `events.retentionDays` (7 by default; a ' +
        "session's newest whatever its age). A reader that was away asks for the events after the last number it saw.",
      schema: {
        query: {
          type: 'object',
          additionalProperties: false,
          required: ['session'],
          properties: {
            session: sessionName,
            after: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
            types: eventTypesCsv,
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        },
      },
      async handler({ query }) {
        const types = typesOf(query.types as string | undefined, '/types');
        const after = Number(query.after ?? 0);
        const limit = Number(query.limit ?? 100);
        const envelopes = await eventLog.page(query.session as string, after, [...types], limit);
        const events = envelopes.map((envelope) => JSON.parse(envelope) as GatewayEvent);
        return { events, nextAfter: events.at(-1)?.seq ?? after, hasMore: events.length === limit };
      },
    },
    {
      method: 'GET',
      path: '/api/events/stream',
      operationId: 'streamEvents',
      responses: { 200: { raw: { contentType: 'text/event-stream', schema: { type: 'string' } }, description: 'Server-Sent Events: each event as `id`, `event` and `data` (the event envelope as JSON)' } },
      access: 'webhooks:manage',
      sessionFrom: ({ query }) => (query as { session?: string }).session,
      summary: 'events as they commit, as Server-Sent Events (query: session, events as a comma list, after); resumes after `Last-Event-ID`',
      description:
        "Each event's `id:` is a cursor: the event's number for a stream of one session, else `session:number` pairs. " +
        'A client that reconnects with it as `Last-Event-ID` (or `after=`) first gets every event it missed, from the ' +
        'event log, then the live ones: none missed, none twice. Without a cursor the stream starts with the next event.',
      schema: {
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            session: sessionName,
            events: eventTypesCsv,
            after: {
              type: 'string',
              minLength: 1,
              maxLength: 100_000,
              pattern: CURSOR_PATTERN,
              'x-invalid-message': 'must be a number or session:number pairs joined by commas',
              description: 'a cursor to resume after (as `Last-Event-ID`, which wins over it)',
            },
          },
        },
      },
      rulesBeyondSchema: [{ path: '/after', rule: 'a bare number names a position in one session: it needs `session`' }],
      handler({ query, ctx }) {
        const types = typesOf(query.events as string | undefined, '/events');
        const session = query.session as string | undefined;
        const lastEventId = ctx.get('Last-Event-ID');
        const cursor = lastEventId || (query.after as string | undefined);
        const resumeFrom = cursor === undefined ? undefined : parseCursor(cursor, session);
        if (typeof resumeFrom === 'string') throw ValidationError.field(lastEventId ? '/Last-Event-ID' : '/after', resumeFrom);
        const principal = ctx.state.principal;
        const refusal = places.refusal(principal);
        if (refusal) throw new ServerBusyError(`${refusal}; retry later`, 5);
        const release = places.take(principal);
        // a session-limited key hears only its own sessions
        const allowed = principal?.kind === 'key' && principal.sessions ? new Set(principal.sessions) : null;
        const stream = new PassThrough();
        streams.add(stream);
        const inScope = (name: string) => (!session || name === session) && (!allowed || allowed.has(name));
        const write = (event: GatewayEvent, positions: Map<string, number>) =>
          stream.write(`id: ${formatCursor(positions, session)}\nevent: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`);
        const following = followLog({
          log: eventLog,
          resumeFrom,
          inScope,
          types,
          isOpen: () => !stream.destroyed,
          deliver(event, positions, catchingUp) {
            if (!catchingUp && stream.writableLength > MAX_BUFFERED_BYTES) return void stream.destroy();
            write(event, positions);
            // the past is read no faster than the reader takes it
            if (catchingUp && stream.writableLength > MAX_BUFFERED_BYTES / 2) return new Promise<void>((go) => stream.once('drain', go).once('close', go));
          },
        });
        following.failed.catch(() => stream.destroy());
        const unsubscribe = following.stop;
        // revoking the key ends its open streams: a leaked key stops listening at once
        const unwatch = principal?.kind === 'key' ? apiKeys.onRevoke((id) => id === principal.id && stream.destroy()) : undefined;
        const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), HEARTBEAT_MS);
        heartbeat.unref();
        const close = () => {
          clearInterval(heartbeat);
          unsubscribe();
          unwatch?.();
          streams.delete(stream);
          release();
          stream.end();
        };
        ctx.req.on('close', close);
        stream.on('close', close);
        ctx.req.socket.setTimeout(0);
        ctx.req.socket.setNoDelay(true);
        ctx.type = 'text/event-stream';
        ctx.set('Cache-Control', 'no-cache');
        ctx.set('X-Accel-Buffering', 'no');
        // the stream is this connection's last response, so ending it at shutdown frees the socket at once
        ctx.set('Connection', 'close');
        ctx.status = 200;
        ctx.body = stream;
        stream.write(': connected\n\n');
        return undefined;
      },
    },
  ];
}
