// The OpenAPI document without a running daemon (`gateway openapi`, tests): the route table built over inert services.
import { DEFAULT_CONFIG } from '../config/defaults.js';
import type { GatewayConfig } from '../config/types.js';
import type { Metrics } from '../metrics.js';
import { VERSION } from '../version.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi.js';
import { allRoutes } from './routes/index.js';
import type { Services } from './services.js';
import type { RouteDef } from './types.js';

/** Route factories only keep references to the services; building the table needs none of them to work. */
export function routeTable(config: GatewayConfig = DEFAULT_CONFIG): RouteDef[] {
  const services = new Proxy({ config, version: VERSION, startedAt: 0 } as unknown as Services, {
    get: (target, key) => (key in target ? target[key as keyof Services] : {}),
  });
  return allRoutes(services, {} as Metrics, new Set());
}

export function standaloneDocument(config: GatewayConfig = DEFAULT_CONFIG): OpenApiDocument {
  return buildOpenApiDocument(routeTable(config), { version: VERSION, config });
}
