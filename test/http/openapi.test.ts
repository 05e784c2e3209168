import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import addFormatsModule from 'ajv-formats';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { EVENT_TYPES } from '../../src/events/catalogue.js';
import { routeTable, standaloneDocument } from '../../src/http/document.js';
import { errorStatus } from '../../src/http/error-status.js';
import { openApiPath } from '../../src/http/openapi.js';
import { ID_FORMATS } from '../../src/http/schemas/id-formats.js';
import { runCli } from '../helpers/cli.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const doc = standaloneDocument();
const text = JSON.stringify(doc);
type Operation = { operationId: string; responses: Record<string, unknown>; security: unknown[] };
const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op: op as unknown as Operation })));

describe('the OpenAPI document', () => {
  test('validates against the OpenAPI 3.1 schema', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(doc.openapi, '3.1.0');
  });

  test('the Redocly linter (recommended rules) reports no errors and no warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: join(tmpdir(), 'openapi.json'), config });
    assert.deepEqual(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`), []);
  });

  test('every request body has an example; every parameter and every webhook (event) a description', () => {
    const missing: string[] = [];
    for (const { path, method, op } of operations()) {
      const { requestBody, parameters = [] } = op as unknown as { requestBody?: { content: Record<string, { example?: unknown }> }; parameters?: Array<{ name: string; in: string; description?: string }> };
      if (requestBody && Object.values(requestBody.content).some((media) => media.example === undefined)) missing.push(`${method} ${path}: request body example`);
      for (const p of parameters) if (!p.description) missing.push(`${method} ${path}: ${p.in} parameter ${p.name}`);
    }
    for (const [type, item] of Object.entries(doc.webhooks as Record<string, { post: { description?: string; parameters: Array<{ name: string; description?: string }> } }>)) {
      if (!item.post.description) missing.push(`webhook ${type}`);
      for (const p of item.post.parameters) if (!p.description) missing.push(`webhook ${type}: header ${p.name}`);
    }
    assert.deepEqual(missing, []);
  });

  test('each wa-* format and its pattern in the document accept the same strings', () => {
    const tricky = ['', ' ', '+', '0123456', '+1 (555) 000-1111', '+15550001111', ' 15550001111 ', '1555000111122233', '15550001111@s.whatsapp.net', '15550001111:3@s.whatsapp.net',
      '15550001111@c.us', ' 15550001111@s.whatsapp.net\n', '200000000000001@lid', '120363000000000001@g.us', '1-2-3-4@g.us', '12345678901@newsletter', 'status@broadcast',
      'a@s.whatsapp.net', '15550001111@s.whatsapp.net ', '++15550001111', '(+1)5550001111', '+1\u00a05550001111', '1555@g.us', 'x'.repeat(10)];
    for (const [name, format] of Object.entries(ID_FORMATS)) {
      const pattern = new RegExp(format.pattern, 'u');
      for (const value of tricky) assert.equal(pattern.test(value), format.validate(value), `${name} ${JSON.stringify(value)}`);
      fc.assert(fc.property(fc.stringMatching(pattern, { size: 'small' }), (value) => format.validate(value)), { numRuns: 300, seed: 28 });
    }
  });

  test('servers is relative: "try it out" and clients reach whatever origin served the document', () => {
    assert.deepEqual((doc.servers as Array<{ url: string }>).map((s) => s.url), ['/']);
  });

  test('405, 408 and 431 are documented: every operation can meet 408 and 431, one on a path without all five methods 405', () => {
    for (const { path, op } of operations()) {
      for (const status of ['408', '431']) assert.ok(op.responses[status], `${op.operationId} ${status}`);
      const methods = Object.keys(doc.paths[path]!).length;
      if (methods < 5) assert.ok(op.responses['405'], `${op.operationId} 405`);
    }
  });

  test('every route is an operation, and every operation a route', () => {
    const routes = new Set(routeTable().map((r) => `${r.method} ${openApiPath(r.path)}`));
    const documented = new Set(operations().map((o) => `${o.method} ${o.path}`));
    assert.deepEqual([...routes].filter((r) => !documented.has(r)), [], 'routes missing from the document');
    assert.deepEqual([...documented].filter((o) => !routes.has(o)), [], 'operations without a route');
    assert.equal(routes.size, documented.size);
  });

  test('operationIds are unique camelCase names', () => {
    const ids = operations().map((o) => o.op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[a-z][a-zA-Z]+$/);
  });

  test("all 36 events (SPEC's 31, contact.identity, chat.pin, message.failed, message.undecryptable and session.health) are webhooks with their payload schema and the signature headers", () => {
    const webhooks = doc.webhooks as Record<string, { post: { parameters: Array<{ name: string }>; requestBody: { content: Record<string, { schema: unknown }> } } }>;
    assert.equal(EVENT_TYPES.length, 36);
    assert.deepEqual(Object.keys(webhooks).sort(), [...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const post = webhooks[type]!.post;
      assert.ok(post.parameters.some((p) => p.name === 'X-Webhook-Signature'), type);
      assert.match(JSON.stringify(post.requestBody.content['application/json']!.schema), /Payload"/);
    }
  });

  test('the error envelope lists every error code, each under its status', () => {
    const schemas = (doc.components as { schemas: Record<string, { properties: { error: { properties: { code: { enum: string[] } } } } }> }).schemas;
    for (const [code, status] of Object.entries(errorStatus)) {
      assert.ok(schemas[`Error${status}`]!.properties.error.properties.code.enum.includes(code), code);
    }
  });

  test('lists carry X-Total-Count, async sends Preference-Applied, 429s Retry-After', () => {
    const list = doc.paths['/api/sessions']!.get as unknown as { responses: Record<string, { headers: Record<string, unknown> }> };
    assert.ok(list.responses['200']!.headers['X-Total-Count']);
    const send = doc.paths['/api/messages/send']!.post as unknown as { responses: Record<string, { headers?: Record<string, unknown> }> };
    assert.ok(send.responses['202']!.headers!['Preference-Applied']);
    const responses = (doc.components as { responses: Record<string, { headers: Record<string, unknown> }> }).responses;
    assert.ok(responses.TooManyRequests!.headers['Retry-After']);
  });

  test('examples exist for the main routes and fit their schemas', () => {
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
    // the wa-* formats are annotations for a generic validator: their patterns carry the rule
    for (const name of Object.keys(ID_FORMATS)) ajv.addFormat(name, true);
    ajv.addSchema(doc, 'openapi.json');
    const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
    const checked: string[] = [];
    for (const { path, method, op } of operations()) {
      const bodies = [
        ['requestBody', (op as { requestBody?: { content: Record<string, { example?: unknown }> } }).requestBody?.content],
        ...Object.entries(op.responses).map(([status, r]) => [`responses/${status}`, (r as { content?: Record<string, { example?: unknown }> }).content] as const),
      ] as Array<[string, Record<string, { example?: unknown }> | undefined]>;
      for (const [where, content] of bodies) {
        const json = content?.['application/json'];
        if (json?.example === undefined) continue;
        const validate = ajv.compile({ $ref: `openapi.json#/paths/${escape(path)}/${method.toLowerCase()}/${where}/content/application~1json/schema` });
        assert.ok(validate(json.example), `${op.operationId} ${where}: ${JSON.stringify(validate.errors)}`);
        checked.push(`${op.operationId} ${where}`);
      }
    }
    for (const id of ['createSession', 'sendMessage', 'createWebhook', 'mintClientToken']) {
      assert.ok(checked.includes(`${id} requestBody`), `${id} has a body example`);
      assert.ok(checked.some((c) => c.startsWith(`${id} responses/2`)), `${id} has a response example`);
    }
  });

  test('security: public, master-only, scoped and client-token routes', () => {
    const op = (method: string, path: string) => (doc.paths[path] as Record<string, unknown>)[method] as Operation;
    assert.deepEqual(op('get', '/api/health').security, []);
    assert.deepEqual(op('get', '/api/admin/settings').security, [{ masterKey: [] }]);
    assert.deepEqual(op('get', '/api/sessions').security, [{ masterKey: [] }, { apiKey: ['sessions:read'] }]);
    assert.deepEqual(op('post', '/api/messages/send').security, [{ masterKey: [] }, { apiKey: ['messages:send'] }, { clientToken: ['send_message'] }]);
  });
});

describe('GET /api/openapi.json and gateway openapi', () => {
  let daemon: TestDaemon;
  let closed: TestDaemon;
  before(async () => {
    [daemon, closed] = await Promise.all([startDaemon(), startDaemon({ config: 'docs:\n  public: false\n' })]);
  });
  after(async () => {
    await Promise.all([daemon?.cleanup(), closed?.cleanup()]);
  });

  test('the daemon serves the document without a key; it is the one gateway openapi prints', async () => {
    const served = await daemon.request('GET', '/api/openapi.json', undefined, null);
    assert.equal(served.status, 200);
    assert.match(served.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(served.body, doc);

    const dir = mkdtempSync(join(tmpdir(), 'gateway-openapi-'));
    try {
      const printed = await runCli(['openapi'], { cwd: dir });
      assert.equal(printed.code, 0, printed.stderr);
      assert.deepEqual(JSON.parse(printed.stdout), doc);
      const written = await runCli(['openapi', '--output', 'api.json'], { cwd: dir });
      assert.equal(written.code, 0, written.stderr);
      assert.equal(written.stdout, '');
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')), doc);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('with docs.public: false it needs the master key or any API key (no scope needed), never a client token', async () => {
    assert.equal((await closed.request('GET', '/api/openapi.json', undefined, null)).status, 401);
    assert.equal((await closed.request('GET', '/api/openapi.json')).status, 200);
    const key = await closed.request('POST', '/api/admin/keys', { name: 'reader', scopes: ['media:read'] });
    assert.equal(key.status, 201);
    const withKey = await closed.request('GET', '/api/openapi.json', undefined, key.body.data.key);
    assert.equal(withKey.status, 200);
    assert.equal(withKey.body.openapi, '3.1.0');
    // the closed daemon's document says so
    assert.deepEqual(withKey.body.paths['/api/openapi.json'].get.security, [{ masterKey: [] }, { apiKey: [] }]);

    await closed.request('POST', '/api/sessions', { name: 'docs', engine: 'sandbox' });
    await closed.request('PUT', '/api/sessions/docs/client-rules', { recipientMode: 'any', allowedActions: 'read_contact' });
    const minted = await closed.request('POST', '/api/client-tokens', { session: 'docs', ephemeralId: 'visitor' });
    assert.equal(minted.status, 201);
    const withToken = await closed.request('GET', '/api/openapi.json', undefined, minted.body.data.token);
    assert.equal(withToken.status, 403);
    assert.equal(withToken.body.error.code, 'ACTION_NOT_ALLOWED');
  });
});
