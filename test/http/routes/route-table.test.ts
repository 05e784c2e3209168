import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG } from '../../../src/config/defaults.js';
import { allRoutes } from '../../../src/http/routes/index.js';
import type { Services } from '../../../src/http/services.js';
import type { Metrics } from '../../../src/metrics.js';

/** Route factories only keep references to the services; building the table needs none of them to work. */
const services = new Proxy({ config: DEFAULT_CONFIG, version: '0.0.0', startedAt: 0 } as unknown as Services, {
  get: (target, key) => (key in target ? target[key as keyof Services] : {}),
});
const routes = allRoutes(services, {} as Metrics, new Set());

test('every route validates its path parameters, and its body when the method takes one', () => {
  const problems: string[] = [];
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    if (params.length) {
      const schema = route.schema.params as { required?: string[]; properties?: Record<string, unknown> } | undefined;
      if (!schema) problems.push(`${id}: no params schema`);
      for (const name of params) if (schema && !schema.properties?.[name]) problems.push(`${id}: params schema lacks ${name}`);
    }
    if ((route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH') && !route.schema.body) problems.push(`${id}: no body schema`);
    if (!route.summary) problems.push(`${id}: no summary`);
  }
  assert.deepEqual(problems, []);
});

test('no two routes share a method and path', () => {
  const seen = new Set<string>();
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    assert.ok(!seen.has(id), `duplicate route ${id}`);
    seen.add(id);
  }
});
