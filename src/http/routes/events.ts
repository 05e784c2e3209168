// GET /api/events/stream: live events over Server-Sent Events, filtered by session and event type (operators, `gateway events tail`).
import { PassThrough } from 'node:stream';
import { ServerBusyError, ValidationError } from '../../errors.js';
import { isEventType } from '../../events/catalogue.js';
import { sessionName } from '../schemas/common.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const HEARTBEAT_MS = 15_000;
/**
 * A client that stops reading is dropped once this much waits for it in the stream (beyond the socket's own buffers):
 * enough for a burst of a few hundred events, small enough that maxStreams idle readers cannot take the memory.
 */
const MAX_BUFFERED_BYTES = 256 * 1024;

export function eventRoutes({ bus, config }: Services, streams: Set<PassThrough>): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/events/stream',
      access: 'webhooks:manage',
      sessionFrom: ({ query }) => (query as { session?: string }).session,
      summary: 'live events as Server-Sent Events (query: session, events as a comma list)',
      schema: {
        query: {
          type: 'object',
          additionalProperties: false,
          properties: { session: sessionName, events: { type: 'string', maxLength: 2000 } },
        },
      },
      handler({ query, ctx }) {
        const wanted = query.events ? String(query.events).split(',').map((e: string) => e.trim()).filter(Boolean) : [];
        const unknown = wanted.filter((e: string) => e !== '*' && !isEventType(e));
        if (unknown.length) throw ValidationError.field('/events', `unknown event types: ${unknown.join(', ')}`);
        const types = wanted.includes('*') ? new Set<string>() : new Set(wanted);
        if (streams.size >= config.events.maxStreams) throw new ServerBusyError(`${config.events.maxStreams} event streams are open already; retry later`, 5);
        // a session-limited key hears only its own sessions
        const principal = ctx.state.principal;
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
        const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), HEARTBEAT_MS);
        heartbeat.unref();
        const close = () => {
          clearInterval(heartbeat);
          unsubscribe();
          streams.delete(stream);
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
