// Issue 27 item 2: a forward gives up instead of hanging when the database does not say which node runs the session (a
// silent partition: the owner lookup used to wait for as long as the connection did), with 503 NODE_UNREACHABLE and
// Retry-After.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Cluster } from '../../src/cluster/cluster.js';
import { createForwarder } from '../../src/cluster/forward.js';
import { GatewayError } from '../../src/errors.js';
import type { AppContext, RouteDef } from '../../src/http/types.js';
import { createLogger } from '../../src/logger.js';

test('a forward whose owner lookup gets no answer fails with NODE_UNREACHABLE and Retry-After', async () => {
  const silent = new Promise<never>(() => {});
  const cluster = { nodeId: 'n1', leaseMs: 4000, ownerOf: () => silent, leastLoaded: () => silent } as unknown as Cluster;
  const forwarder = createForwarder(cluster, { secret: Buffer.from('a-cluster-secret-for-this-test-0123456789'), logger: createLogger('fatal'), bodyLimits: { defaultBytes: 1024, mediaBytes: 1024 } });
  const headers = new Map<string, string>();
  const ctx = { get: () => '', set: (name: string, value: string) => headers.set(name, value), method: 'GET', path: '/api/sessions/s1', search: '' } as unknown as AppContext;
  await assert.rejects(forwarder.forward(ctx, { startsSession: undefined } as unknown as RouteDef, 's1'), (err) => err instanceof GatewayError && err.code === 'NODE_UNREACHABLE');
  assert.equal(headers.get('Retry-After'), '4');
});
