// GET /api/events/stream: live events over Server-Sent Events, filtered by session and event type (operators, `gateway events tail`).
import { PassThrough } from 'node:stream';
import { ValidationError } from '../../errors.js';
import { isEventType } from '../../events/catalogue.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

const HEARTBEAT_MS = 15_000;

export function eventRoutes({ bus }: Services, streams: Set<PassThrough>): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/events/stream',
      access: 'webhooks:manage',
      summary: 'live events as Server-Sent Events (query: session, events as a comma list)',
      schema: {
        query: {
          type: 'object',
          additionalProperties: false,
          properties: { session: { type: 'string', minLength: 1, maxLength: 64 }, events: { type: 'string', maxLength: 2000 } },
        },
      },
      handler({ query, ctx }) {
        const wanted = query.events ? String(query.events).split(',').map((e: string) => e.trim()).filter(Boolean) : [];
        const unknown = wanted.filter((e: string) => !isEventType(e));
        if (unknown.length) throw ValidationError.field('/events', `unknown event types: ${unknown.join(', ')}`);
        const types = new Set(wanted);
        const stream = new PassThrough();
        streams.add(stream);
        const unsubscribe = bus.subscribe((event) => {
          if (query.session && event.session !== query.session) return;
          if (types.size && !types.has(event.event)) return;
          stream.write(`id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`);
        });
        const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), HEARTBEAT_MS);
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
        ctx.status = 200;
        ctx.body = stream;
        stream.write(': connected\n\n');
        return undefined;
      },
    },
  ];
}
