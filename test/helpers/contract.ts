// The response contract hook: every answer a test receives through the shared helpers is checked against the OpenAPI
// document's schema for its route and status, so a response that drifts from the document fails the test that saw it.
import { appendFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { standaloneDocument } from '../../src/http/document.js';
import type { OpenApiDocument } from '../../src/http/openapi.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Operation {
  operationId: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}
interface ResponseObject {
  content?: Record<string, { schema?: object }>;
  headers?: Record<string, unknown>;
}
interface Template {
  path: string;
  regex: RegExp;
  literals: number;
  operations: Record<string, Operation>;
}

const DOC_ID = 'openapi.json';
let loaded: { doc: OpenApiDocument; ajv: Ajv2020; templates: Template[]; compiled: Map<string, ValidateFunction> } | undefined;

function contract() {
  if (loaded) return loaded;
  // the document of a daemon whose document needs a key: it lists the 401/403 a test may meet when it sets docs.public: false
  const doc = standaloneDocument({ ...DEFAULT_CONFIG, docs: { public: false } });
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
  ajv.addSchema(doc, DOC_ID);
  const templates = Object.entries(doc.paths).map(([path, operations]) => ({
    path,
    regex: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}/?$`),
    literals: path.split('/').filter((segment) => segment && !segment.startsWith('{')).length,
    operations: operations as unknown as Record<string, Operation>,
  }));
  loaded = { doc, ajv, templates, compiled: new Map() };
  return loaded;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validatorAt(ref: string): ValidateFunction {
  const { ajv, compiled } = contract();
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}#${ref}` });
    compiled.set(ref, validate);
  }
  return validate;
}

/** The route template a concrete path belongs to (literal segments win: `/groups/join` over `/groups/{groupId}`). */
export function matchTemplate(path: string): Template | undefined {
  const candidates = contract().templates.filter((t) => t.regex.test(path));
  return candidates.sort((a, b) => b.literals - a.literals)[0];
}

export class ContractDrift extends Error {
  constructor(message: string) {
    super(`response drifts from the OpenAPI document: ${message}`);
    this.name = 'ContractDrift';
  }
}

const CONNECTION_CODES = new Set(['MALFORMED_REQUEST', 'HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT']);

/**
 * Checks one answer: its status is documented for the operation, its JSON body fits that status's schema, and the
 * documented headers are there. Throws ContractDrift otherwise.
 */
export function checkResponse(method: string, url: string, status: number, headers: Headers, body: unknown, text: string): void {
  const upper = method.toUpperCase();
  if (upper === 'OPTIONS' || upper === 'HEAD') return;
  // the path as sent: URL parsing would resolve `%2e%2e` and `..` segments the daemon does not resolve
  const path = url.replace(/^[a-z]+:\/\/[^/]+/i, '').split(/[?#]/)[0]!;
  const what = `${upper} ${path} → ${status}`;
  const isJson = /^application\/json\b/.test(headers.get('content-type') ?? '');
  // Node's HTTP server answers some requests itself (a header or request timeout, an unparseable request) before the
  // application sees them: no X-Request-Id, no JSON. Those are the connection's answers, not the API's.
  if (!headers.get('x-request-id') && !isJson && status >= 400) return;
  if (!headers.get('x-request-id')) throw new ContractDrift(`${what}: no X-Request-Id`);
  // refused before any route was looked for (a request line or headers over the limit or unparseable, a target that is
  // not a path, a request too slow): the error envelope of its status, whatever operation the path names
  if (isJson && CONNECTION_CODES.has((body as { error?: { code?: string } } | undefined)?.error?.code ?? '')) {
    validateAt(`/components/schemas/Error${status}`, body, what);
    return;
  }
  const template = matchTemplate(path);
  const operation = template?.operations[method.toLowerCase()];
  if (!template || !operation) {
    // no such route (404) or method (405): the answer is still the error envelope
    if (status < 400) throw new ContractDrift(`${what}: ${status} from a path and method the document does not have`);
    // a 405 is documented on the operations of its path (the methods it has)
    if (status === 405 && template && !Object.values(template.operations).some((op) => op.responses['405'])) {
      throw new ContractDrift(`${what}: 405 on ${template.path}, whose operations do not document it`);
    }
    if (isJson) validateAt(`/components/schemas/Error${status}`, body, what);
    return;
  }
  // CONTRACT_COVERAGE=FILE lists every operation and status the tests saw (which ones no test reaches)
  if (process.env.CONTRACT_COVERAGE) appendFileSync(process.env.CONTRACT_COVERAGE, `${operation.operationId} ${status}\n`);
  const base = pointer('', 'paths', template.path, method.toLowerCase(), 'responses');
  let response = operation.responses[String(status)] ?? (status >= 400 ? operation.responses.default : undefined);
  let at = `${base}/${status}`;
  if (!response) throw new ContractDrift(`${what}: status ${status} is not documented for ${operation.operationId} (${Object.keys(operation.responses).join(', ')})`);
  if ('$ref' in response) {
    at = response.$ref.slice(1);
    response = resolve(at) as ResponseObject;
  }
  const content = (response as ResponseObject).content ?? {};
  if (status < 300 && (response as ResponseObject).headers?.['X-Total-Count'] && !headers.get('x-total-count')) {
    throw new ContractDrift(`${what}: a list without X-Total-Count`);
  }
  if (status === 429 && !headers.get('retry-after')) {
    throw new ContractDrift(`${what}: no Retry-After`);
  }
  // a file served with its own type (a media download): any type, JSON included, is what the document says
  if (content['*/*']) return;
  if (!isJson) {
    if (content['application/json'] && text !== '') throw new ContractDrift(`${what}: documented as JSON, answered ${headers.get('content-type')}`);
    return;
  }
  if (!content['application/json']) throw new ContractDrift(`${what}: answered JSON, documented as ${Object.keys(content).join(', ') || 'no body'}`);
  validateAt(`${at}/content/${pointer('application/json')}/schema`, body, what);
}

function resolve(at: string): unknown {
  let node: unknown = contract().doc;
  for (const part of at.split('/').slice(1)) node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

function validateAt(ref: string, body: unknown, what: string): void {
  const validate = validatorAt(ref);
  if (validate(body)) return;
  const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  throw new ContractDrift(`${what}: ${problems.join('; ')}\nbody: ${JSON.stringify(body)?.slice(0, 1500)}`);
}
