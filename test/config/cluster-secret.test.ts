// A PostgreSQL store makes the daemon a node of a cluster, whose hops between nodes are signed with cluster.secret: the
// configuration refuses such a store without that secret, or with the master key as the secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.js';

const masterKey = 'svc_master_cluster_0123456789abcdef0123';
const postgres = { GATEWAY_MASTER_KEY: masterKey, GATEWAY_STORE: 'postgres', GATEWAY_DATABASE_URL: 'postgres://gateway@127.0.0.1/gateway' };
const refused = (pattern: RegExp) => (err: unknown) => err instanceof ConfigError && pattern.test(err.problems.join('\n'));

test('a postgres store needs cluster.secret, other than the master key; SQLite does not', () => {
  assert.throws(() => loadConfig({ env: postgres }), refused(/cluster\.secret: required/));
  assert.throws(() => loadConfig({ env: { ...postgres, GATEWAY_CLUSTER_SECRET: masterKey } }), refused(/cluster\.secret: must differ from the master key/));
  assert.equal(loadConfig({ env: { ...postgres, GATEWAY_CLUSTER_SECRET: 'a-cluster-secret-of-its-own-0123456789' } }).cluster.secret, 'a-cluster-secret-of-its-own-0123456789');
  assert.equal(loadConfig({ env: { GATEWAY_MASTER_KEY: masterKey } }).cluster.secret, undefined);
});
