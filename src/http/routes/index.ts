// Every route of the daemon, in one list (the route-table test and docs walk it).
import type { PassThrough } from 'node:stream';
import type { Metrics } from '../../metrics.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';
import { clientTokenRoutes } from './client-tokens.js';
import { eventRoutes } from './events.js';
import { healthRoutes } from './health.js';
import { keyRoutes } from './keys.js';
import { mediaRoutes } from './media.js';
import { messageRoutes } from './messages.js';
import { sandboxRoutes } from './sandbox.js';
import { sessionRoutes } from './sessions.js';

export function allRoutes(services: Services, metrics: Metrics, eventStreams: Set<PassThrough>): RouteDef[] {
  return [
    ...healthRoutes(services, metrics),
    ...sessionRoutes(services),
    ...keyRoutes(services),
    ...messageRoutes(services),
    ...clientTokenRoutes(services),
    ...mediaRoutes(services),
    ...eventRoutes(services, eventStreams),
    ...sandboxRoutes(services),
  ];
}
