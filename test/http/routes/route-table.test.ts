import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeTable } from '../../../src/http/document.js';

const routes = routeTable();

test('every route validates its path parameters, and its body on every method that may carry one', () => {
  const problems: string[] = [];
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    if (params.length) {
      const schema = route.schema.params as { required?: string[]; properties?: Record<string, unknown> } | undefined;
      if (!schema) problems.push(`${id}: no params schema`);
      for (const name of params) if (schema && !schema.properties?.[name]) problems.push(`${id}: params schema lacks ${name}`);
    }
    // DELETE too: the router reads a body on every method that may carry one, so it must be validated (emptyBody at least)
    if (route.method !== 'GET' && !route.schema.body) problems.push(`${id}: no body schema`);
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

test('every admin action is audited: each change that needs the master key or a manage scope (the sandbox aside)', () => {
  const ADMIN_ACCESS = new Set(['master', 'sessions:manage', 'webhooks:manage', 'keys:manage']);
  const unaudited = routes
    .filter((r) => r.method !== 'GET' && ADMIN_ACCESS.has(r.access) && !r.path.startsWith('/api/sandbox/') && !r.audit)
    .map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(unaudited, []);
  const audited = routes.filter((r) => r.audit).map((r) => (typeof r.audit === 'string' ? r.audit : r.audit!.action));
  assert.ok(audited.length >= 19, `${audited.length} audited routes`);
});
