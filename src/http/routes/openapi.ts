// GET /api/openapi.json: the OpenAPI 3.1 document of this daemon, built once (on first request) from the route table.
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function openApiRoutes({ config }: Services, document: () => object): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/openapi.json',
      access: config.docs.public ? 'public' : 'key',
      operationId: 'getOpenApiDocument',
      responses: {
        200: {
          raw: { contentType: 'application/json', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } } } },
          description: 'this document (OpenAPI 3.1), not wrapped in `data`',
        },
      },
      summary: 'the OpenAPI 3.1 document of this API (no key needed unless docs.public is false)',
      schema: {},
      handler({ ctx }) {
        ctx.type = 'application/json';
        ctx.body = document();
        return undefined;
      },
    },
  ];
}
