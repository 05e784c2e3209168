// GET /api/events/stream: live events over Server-Sent Events, filtered by session and event type (operators, `gateway events tail`).
import { PassThrough } from 'node:stream';
import { ServerBusyError, ValidationError } from '../../errors.js';
import { EVENT_TYPES, isEventType } from '../../events/catalogue.js';
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

export function eventRoutes({ bus, apiKeys, config }: Services, streams: Set<PassThrough>): RouteDef[] {
  const places = new QuotaCounter({ max: config.events.maxStreams, perPrincipal: config.events.maxStreamsPerKey, masterReserve: STREAM_MASTER_RESERVE }, 'event streams');
  return [
    {
      method: 'GET',
      path: '/api/events/stream',
      operationId: 'streamEvents',
      responses: { 200: { raw: { contentType: 'text/event-stream', schema: { type: 'string' } }, description: 'Server-Sent Events: each event as `id`, `event` and `data` (the event envelope as JSON)' } },
      access: 'webhooks:manage',
      sessionFrom: ({ query }) => (query as { session?: string }).session,
      summary: 'live events as Server-Sent Events (query: session, events as a comma list)',
      schema: {
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            session: sessionName,
            events: { type: 'string', maxLength: 2000, pattern: csvOf(['*', ...EVENT_TYPES]), 'x-csv-of': ['*', ...EVENT_TYPES], 'x-invalid-message': 'must be a comma list of event types (or *)' },
          },
        },
      },
      handler({ query, ctx }) {
        const wanted = query.events ? String(query.events).split(',').map((e: string) => e.trim()).filter(Boolean) : [];
        const unknown = wanted.filter((e: string) => e !== '*' && !isEventType(e));
        if (unknown.length) throw ValidationError.field('/events', `unknown event types: ${unknown.join(', ')}`);
        const types = wanted.includes('*') ? new Set<string>() : new Set(wanted);
        const principal = ctx.state.principal;
        const refusal = places.refusal(principal);
        if (refusal) throw new ServerBusyError(`${refusal}; retry later`, 5);
        const release = places.take(principal);
        // a session-limited key hears only its own sessions
        const allowed = principal?.kind === 'key' && principal.sessions ? new Set(principal.sessions) : null;
        const stream = new PassThrough();
        streams.add(stream);
        const unsubscribe = bus.subscribe((event) => {
          if (query.session && event.session !== query.session) return;
          if (allowed && !allowed.has(event.session)) return;
          if (types.size && !types.has(event.event)) return;
          if (stream.writableLength > MAX_BUFFERED_BYTES) return void stream.destroy();
          stream.write(`id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`);
        });
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
