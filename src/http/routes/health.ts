// Health and Prometheus metrics routes (DESIGN §6).
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';
import type { Metrics } from '../../metrics.js';

export function healthRoutes({ sessions, version, startedAt, config }: Services, metrics: Metrics): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/health',
      operationId: 'getHealth',
      responses: { 200: { data: ref('Health') } },
      access: 'public',
      summary: 'liveness, version and session counts (no key needed)',
      schema: {},
      handler: async () => ({
        status: 'ok',
        version,
        uptime: Math.round((Date.now() - startedAt) / 1000),
        sessions: await sessions.counts(),
      }),
    },
    {
      method: 'GET',
      path: '/metrics',
      operationId: 'getMetrics',
      responses: { 200: { raw: { contentType: 'text/plain', schema: { type: 'string' } }, description: 'Prometheus text exposition format' } },
      access: config.metrics.public ? 'public' : 'master',
      summary: 'Prometheus metrics (master key unless metrics.public)',
      schema: {},
      async handler({ ctx }) {
        ctx.type = metrics.contentType;
        ctx.body = await metrics.render();
        return undefined;
      },
    },
  ];
}
