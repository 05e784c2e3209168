// The positive fuzz: requests generated from the OpenAPI document itself (path and query parameters, bodies), each
// checked to be valid against the document before it is sent to a real daemon. A 400 VALIDATION_FAILED for one of them
// is drift (the document allows what the server refuses), unless every field it names is one of the operation's
// documented rules beyond the schema (`x-rules-beyond-schema`: what depends on stored state or a file's bytes).
// Used by test/fuzz/positive.test.ts (fixed seed, bounded count) and test/fuzz/run.ts --positive.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { standaloneDocument } from '../../src/http/document.js';
import { openApiPath, type OpenApiDocument } from '../../src/http/openapi.js';
import { ID_FORMATS } from '../../src/http/schemas/id-formats.js';
import type { RouteDef } from '../../src/http/types.js';
import { valid, type Hints } from './arbitraries.js';
import { clampLoad, fc, hintsFor, resolveRefs, routeId, routeTable, type FuzzCase, type Fuzzer } from './harness.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Schema = Record<string, any>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Rule {
  path: string;
  rule: string;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  'x-rules-beyond-schema'?: Rule[];
}

/** One generated request, with the operation it is for. */
export interface PositiveCase extends FuzzCase {
  operationId: string;
}

export interface Drift {
  operationId: string;
  request: string;
  answer: string;
}

export interface PositiveStats {
  sent: number;
  /** generated values the document's own schema refused (the generator's misses; not sent) */
  notValid: number;
  /** 400 VALIDATION_FAILED naming only documented rules beyond the schema */
  documentedRule: number;
  byStatus: Record<string, number>;
  byOperation: Record<string, number>;
  drifts: Drift[];
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateSchema: false }));
// the document's wa-* formats are annotations here: their patterns carry the rule, and are what is checked
for (const name of Object.keys(ID_FORMATS)) ajv.addFormat(name, true);
const compiled = new WeakMap<object, ValidateFunction>();
function check(schema: Schema, value: unknown): boolean {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  return validate(value) as boolean;
}

/** `{not: {}}`: a property the schema refuses whatever its value */
const isNever = (s: unknown) => isObject(s) && isObject(s.not) && Object.keys(s.not).length === 0;
/** a oneOf of `{required: [...]}` alternatives: exactly one of some fields */
const requiredAlternatives = (oneOf: unknown): string[][] | undefined =>
  Array.isArray(oneOf) && oneOf.every((alt) => isObject(alt) && Array.isArray(alt.required) && Object.keys(alt).length === 1) ? oneOf.map((alt) => alt.required as string[]) : undefined;

/**
 * A body the schema accepts: the generic generator (test/fuzz/arbitraries.ts) picks fields independently, so what one
 * field's value implies for the others (an `if`/`then` of the message type, exactly one of url/base64, header names
 * unique ignoring case, the path's session) is applied afterwards, as the document says it.
 */
function body(schema: Schema, hints: Hints): fc.Arbitrary<unknown> {
  return valid(schema, hints).chain((value) => (isObject(value) ? holdTogether(schema, value, hints) : fc.constant(value)));
}

function holdTogether(schema: Schema, value: Record<string, unknown>, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  let arb: fc.Arbitrary<Record<string, unknown>> = fc.constant(uniqueIgnoringCase(properties, { ...value }));
  const alternatives = requiredAlternatives(schema.oneOf);
  if (alternatives) arb = arb.chain((v) => exactlyOne(alternatives, v, properties, hints));
  for (const rule of (schema.allOf ?? []) as Schema[]) {
    if (!rule.if || !rule.then) continue;
    arb = arb.chain((v) => (check(rule.if, v) ? applyThen(rule.if, rule.then, v, properties, hints) : fc.constant(v)));
  }
  return arb;
}

function applyThen(when: Schema, then: Schema, value: Record<string, unknown>, top: Record<string, Schema>, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const thenProperties = (then.properties ?? {}) as Record<string, Schema>;
  const out = { ...value };
  for (const [field, s] of Object.entries(thenProperties)) if (isNever(s)) delete out[field];
  const missing = ((then.required ?? []) as string[]).filter((field) => !(field in out));
  let arb = fc.record(Object.fromEntries(missing.map((field) => [field, valid(thenProperties[field] ?? top[field], hints, field)]))).map((added) => ({ ...out, ...added }));
  const alternatives = requiredAlternatives(then.oneOf);
  if (alternatives) arb = arb.chain((v) => exactlyOne(alternatives, v, { ...top, ...thenProperties }, hints));
  // what a `then` still refuses (statusViewers on a chat that is not status@broadcast): drop the optional field that set it off
  return arb.map((v) => {
    if (check(then, v)) return v;
    const copy = { ...v };
    for (const field of (when.required ?? []) as string[]) if (field !== 'type') delete copy[field];
    return copy;
  });
}

function exactlyOne(alternatives: string[][], value: Record<string, unknown>, properties: Record<string, Schema>, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const present = alternatives.filter((fields) => fields.every((f) => f in value));
  if (present.length === 1 && alternatives.filter((fields) => fields.some((f) => f in value)).length === 1) return fc.constant(value);
  return fc.constantFrom(...alternatives).chain((chosen) => {
    const copy = { ...value };
    for (const fields of alternatives) for (const f of fields) if (!chosen.includes(f)) delete copy[f];
    const missing = chosen.filter((f) => !(f in copy));
    return fc.record(Object.fromEntries(missing.map((f) => [f, valid(properties[f], hints, f)]))).map((added) => ({ ...copy, ...added }));
  });
}

/** `x-unique-ignoring-case: name`: the items of an array differ in that field, case aside */
function uniqueIgnoringCase(properties: Record<string, Schema>, value: Record<string, unknown>): Record<string, unknown> {
  for (const [field, s] of Object.entries(properties)) {
    const key = s['x-unique-ignoring-case'];
    const items = value[field];
    if (typeof key !== 'string' || !Array.isArray(items)) continue;
    const seen = new Set<string>();
    value[field] = items.filter((item) => {
      const name = String((item as Record<string, unknown>)?.[key]).toLowerCase();
      return seen.has(name) ? false : (seen.add(name), true);
    });
  }
  return value;
}

/** the object schema of an operation's parameters of one kind */
function parameterSchema(parameters: Parameter[], where: 'path' | 'query'): Schema {
  const own = parameters.filter((p) => p.in === where);
  return {
    type: 'object',
    additionalProperties: false,
    required: own.filter((p) => p.required).map((p) => p.name),
    properties: Object.fromEntries(own.map((p) => [p.name, p.schema])),
  };
}

interface Target {
  path: string;
  method: string;
  operation: Operation;
  route: RouteDef;
}

function targets(doc: OpenApiDocument, routes: RouteDef[]): Target[] {
  const byKey = new Map(routes.map((r) => [`${r.method} ${openApiPath(r.path)}`, r]));
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      const route = byKey.get(`${method.toUpperCase()} ${path}`);
      if (!route) throw new Error(`no route for ${method} ${path}`);
      return { path, method: method.toUpperCase(), operation: operation as unknown as Operation, route };
    }),
  );
}

/** One case of one operation: typed parameters and body as generated, before they become text. */
interface Generated {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

function generated(target: Target): fc.Arbitrary<Generated> {
  const hints = hintsFor(target.route);
  const parameters = target.operation.parameters ?? [];
  const pathSchema = parameterSchema(parameters, 'path');
  const querySchema = parameterSchema(parameters, 'query');
  const bodySchema = target.operation.requestBody?.content['application/json']?.schema;
  return fc
    .record({
      params: valid(pathSchema, hints) as fc.Arbitrary<Record<string, unknown>>,
      query: valid(querySchema, hints) as fc.Arbitrary<Record<string, unknown>>,
      body: bodySchema ? body(bodySchema, hints) : fc.constant(undefined),
    })
    .map((g) => {
      // a body field the document ties to a path parameter (`x-equals-path-parameter`) takes its value
      const value = g.body;
      if (bodySchema && isObject(value)) {
        for (const [field, s] of Object.entries((bodySchema.properties ?? {}) as Record<string, Schema>)) {
          const parameter = s['x-equals-path-parameter'];
          if (typeof parameter === 'string' && field in value) value[field] = g.params[parameter];
        }
      }
      return g;
    });
}

/** Whether the document accepts the generated request, its fixture tokens resolved to the ids they stand for. */
function documentAccepts(target: Target, g: Generated, resolve: (value: unknown) => unknown): boolean {
  const parameters = target.operation.parameters ?? [];
  const bodySchema = target.operation.requestBody?.content['application/json']?.schema;
  if (!check(parameterSchema(parameters, 'path'), resolve(g.params))) return false;
  if (!check(parameterSchema(parameters, 'query'), resolve(g.query))) return false;
  return !bodySchema || check(bodySchema, resolve(g.body));
}

function toCase(target: Target, g: Generated): PositiveCase {
  let path = target.path;
  for (const [name, value] of Object.entries(g.params)) path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  const query = Object.entries(g.query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
  const text = g.body === undefined ? undefined : JSON.stringify(g.body);
  const route = routeId(target.route);
  return {
    operationId: target.operation.operationId,
    route,
    mode: 'valid',
    auth: 'master',
    method: target.method,
    path: query ? `${path}?${query}` : path,
    headers: text === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(text === undefined ? {} : { body: clampLoad(route, text) }),
  };
}

/** Whether a 400 VALIDATION_FAILED names only fields the operation documents as ruled beyond its schema. */
function documentedRule(operation: Operation, answer: string): boolean {
  const rules = operation['x-rules-beyond-schema'] ?? [];
  let details: Array<{ path?: string }> = [];
  try {
    details = (JSON.parse(answer) as { error: { details?: Array<{ path?: string }> } }).error.details ?? [];
  } catch {
    return false;
  }
  return details.length > 0 && details.every((d) => rules.some((r) => d.path === r.path || d.path?.startsWith(`${r.path}/`)));
}

export async function runPositive(fuzzer: Fuzzer, params: { numRuns: number; seed: number }): Promise<PositiveStats> {
  const doc = standaloneDocument();
  const all = targets(doc, routeTable());
  const stats: PositiveStats = { sent: 0, notValid: 0, documentedRule: 0, byStatus: {}, byOperation: {}, drifts: [] };
  const byId = new Map(all.map((target) => [target.operation.operationId, target]));
  const cases = fc.oneof(...all.map((target) => generated(target).map((g) => ({ operationId: target.operation.operationId, ...g }))));
  await fc.assert(
    fc.asyncProperty(cases, async ({ operationId, ...g }) => {
      const target = byId.get(operationId)!;
      const resolve = (value: unknown) => (value === undefined ? value : JSON.parse(resolveRefs(JSON.stringify(value), fuzzer.fx, false)));
      if (!documentAccepts(target, g, resolve)) {
        stats.notValid++;
        return;
      }
      const c = toCase(target, g);
      const outcome = await fuzzer.exchange(c);
      stats.sent++;
      stats.byStatus[outcome.status] = (stats.byStatus[outcome.status] ?? 0) + 1;
      stats.byOperation[c.operationId] = (stats.byOperation[c.operationId] ?? 0) + 1;
      if (outcome.status !== 400 || !/"code":"VALIDATION_FAILED"/.test(outcome.text)) return;
      if (documentedRule(target.operation, outcome.text)) {
        stats.documentedRule++;
        return;
      }
      stats.drifts.push({ operationId: c.operationId, request: `${c.method} ${c.path} ${c.body ?? ''}`.slice(0, 600), answer: outcome.text.slice(0, 600) });
    }),
    { ...params, endOnFailure: true },
  );
  return stats;
}
