// Every route of the daemon, in one list (the route-table test and docs walk it).
import type { PassThrough } from 'node:stream';
import type { Metrics } from '../../metrics.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';
import { auditRoutes } from './audit.js';
import { clientTokenRoutes } from './client-tokens.js';
import { consoleRoutes } from './console.js';
import { rootRoutes } from './root.js';
import { docsRoutes } from './docs.js';
import { eventRoutes } from './events.js';
import { healthRoutes } from './health.js';
import { buildOpenApiDocument } from '../openapi.js';
import { openApiRoutes } from './openapi.js';
import { keyRoutes } from './keys.js';
import { mediaRoutes } from './media.js';
import { messageRoutes } from './messages.js';
import { queueRoutes } from './queue.js';
import { sandboxRoutes } from './sandbox.js';
import { sandboxChatRoutes } from './sandbox-chats.js';
import { groupRoutes } from './groups.js';
import { channelRoutes } from './channels.js';
import { presenceRoutes } from './presence.js';
import { chatRoutes } from './chats.js';
import { callRoutes } from './calls.js';
import { contactRoutes } from './contacts.js';
import { identityRoutes } from './identities.js';
import { profileRoutes } from './profile.js';
import { labelRoutes } from './labels.js';
import { sessionRoutes } from './sessions.js';
import { webhookRoutes } from './webhooks.js';
import { adminRoutes } from './admin.js';
import { clusterRoutes } from './cluster.js';

export function allRoutes(services: Services, metrics: Metrics, eventStreams: Set<PassThrough>): RouteDef[] {
  const routes: RouteDef[] = [
    ...healthRoutes(services, metrics),
    ...openApiRoutes(services, () => openApiDocument()),
    ...docsRoutes(services),
    ...consoleRoutes(services),
    ...rootRoutes(services),
    ...sessionRoutes(services),
    ...keyRoutes(services),
    ...messageRoutes(services),
    ...queueRoutes(services),
    ...clientTokenRoutes(services),
    ...mediaRoutes(services),
    ...eventRoutes(services, eventStreams),
    ...webhookRoutes(services),
    ...auditRoutes(services),
    ...groupRoutes(services),
    ...channelRoutes(services),
    ...chatRoutes(services),
    ...callRoutes(services),
    ...presenceRoutes(services),
    ...contactRoutes(services),
    ...identityRoutes(services),
    ...profileRoutes(services),
    ...labelRoutes(services),
    ...adminRoutes(services),
    ...clusterRoutes(services),
    ...sandboxRoutes(services),
    ...sandboxChatRoutes(services),
  ];
  // built on first request (not at start), from the very records the router runs
  let document: object | undefined;
  const openApiDocument = () => (document ??= buildOpenApiDocument(routes, { version: services.version, config: services.config }));
  return routes;
}
