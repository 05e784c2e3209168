// Cluster routes (master key; store.kind: postgres): the nodes and the sessions each runs, and moving a session on purpose.
import { GatewayError } from '../../errors.js';
import { done } from '../respond.js';
import { moveSessionBody, type MoveSessionBody } from '../schemas/cluster.js';
import { sessionParams } from '../schemas/common.js';
import { ref } from '../schemas/resources.js';
import type { Services } from '../services.js';
import type { RouteDef } from '../types.js';

export function clusterRoutes({ cluster }: Services): RouteDef[] {
  const clustered = () => {
    if (!cluster) throw new GatewayError('NOT_CLUSTERED', 'this daemon runs alone on SQLite; several daemons share a PostgreSQL store (store.kind: postgres, docs/SCALING.md)');
    return cluster;
  };
  return [
    {
      method: 'GET',
      path: '/api/cluster',
      operationId: 'getCluster',
      responses: { 200: { data: ref('Cluster') } },
      access: 'master',
      summary: 'the nodes alive now and the sessions each runs',
      schema: {},
      handler: () => clustered().status(),
    },
    {
      method: 'POST',
      path: '/api/cluster/sessions/:session/move',
      operationId: 'moveSession',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: 'move a running session to another node: its owner stops it and the node named starts it from its stored credentials',
      audit: { action: 'session.move', details: ({ body }) => ({ node: (body as MoveSessionBody | undefined)?.node }) },
      schema: { params: sessionParams, body: moveSessionBody },
      example: { body: { node: 'gw-2' } },
      async handler({ params, body }) {
        const { node } = body as MoveSessionBody;
        await clustered().move(params.session, node);
        return done(`session ${params.session} moves to node ${node}`);
      },
    },
  ];
}
