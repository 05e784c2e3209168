// fast-check arbitraries derived from the route table's JSON Schemas: valid values, almost-valid ones (one thing
// wrong) and junk, for bodies, query strings and path segments. A new route or field is fuzzed without a new test.
import fc from 'fast-check';

type Schema = Record<string, any>;

/** Known values by field name (session names, message ids, phone numbers…): valid inputs reach the handlers. */
export type Hints = Record<string, readonly unknown[]>;

/**
 * Values JSON cannot carry as JS values: a sentinel string in the generated value, replaced by the raw token after
 * JSON.stringify (see `toJsonText`). `1e400` parses to Infinity, `NaN` is not JSON at all.
 */
const RAW = '\u0000raw:';
export const raw = (token: string): string => `${RAW}${token}\u0000`;
const RAW_TOKENS = ['1e400', '-1e400', '1e-400', '-0', 'NaN', '123456789012345678901234567890', '9007199254740993', '0.1e1', '1E2'];

/** Marks prototype pollution: if any of these ever appears on a plain object, something merged `__proto__`. */
export const POLLUTION_MARK = 'fzPolluted';
const pollutionPayload = { [POLLUTION_MARK]: true, engine: 'baileys', scopes: ['*'], status: 418, enabled: false, isAdmin: true };

export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  return (text ?? '').replace(/"\\u0000raw:(?:[^"\\]|\\.)*"/g, (literal) => (JSON.parse(literal) as string).slice(RAW.length, -1));
}

const deep = (depth: number, open: string, close: string, inner = '1') => ({ [RAW]: open.repeat(depth) + inner + close.repeat(depth) });

/** One value that is wrong in an interesting way, whatever the field expects. */
export const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    -1, 0, -0.5, 1.5, 2 ** 31, 2 ** 53, -(2 ** 63), Number.MAX_SAFE_INTEGER + 2, 1e21, '', ' ', '\u0000', '\ud800', '\u202e\u0041',
    'NaN', 'Infinity', '-1', '1e400', 'true', 'null', '__proto__', 'constructor', '../../etc/passwd', '%00', '%zz', 'a%2Fb',
    '😀'.repeat(50), 'a\r\nX-Injected: 1', 'image/png\r\nX-Injected: 1', 'image/png; charset=\u0000', 'ǅ\u0301\u0308', '<script>', "'; DROP TABLE sessions; --", null, true, false, [], {}, [[]], [null],
    { __proto__: null }, 'x'.repeat(100 * 1024), ['x'.repeat(10_000)],
  ),
  fc.constantFrom(...RAW_TOKENS).map(raw),
  fc.constantFrom(10, 1000, 5000).map((d) => deep(d, '[', ']')),
  fc.constantFrom(10, 1000, 5000).map((d) => deep(d, '{"a":', '}')),
  fc.constant({ [RAW]: `{"__proto__":${JSON.stringify(pollutionPayload)}}` }),
  fc.constant({ [RAW]: `{"constructor":{"prototype":${JSON.stringify(pollutionPayload)}}}` }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Objects with a RAW key stand for raw JSON text: `{[RAW]: text}` → text. */
export function expandRawObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expandRawObjects);
  if (value && typeof value === 'object') {
    const own = Object.keys(value);
    if (own.length === 1 && own[0] === RAW) return raw((value as Record<string, string>)[RAW]!);
    const out: Record<string, unknown> = {};
    for (const key of own) Object.defineProperty(out, key, { value: expandRawObjects((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

const MAX_ARRAY = 4;
const MAX_STRING = 24;

/** A value the schema accepts (or nearly: `if/then` and cross-field rules are left to the handler to refuse). */
export function valid(schema: Schema | undefined, hints: Hints, field?: string, depth = 0): fc.Arbitrary<unknown> {
  const generated = validBySchema(schema ?? {}, hints, depth);
  const known = field !== undefined && hints[field]?.length ? hints[field] : undefined;
  return known ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: generated, weight: 1 }) : generated;
}

function validBySchema(schema: Schema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (schema.if && schema.then && schema.else) return fc.oneof(validBySchema(schema.then, hints, depth), validBySchema(schema.else, hints, depth));
  const alternatives = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((alt) => validBySchema({ ...schema, oneOf: undefined, anyOf: undefined, ...alt }, hints, depth)));
  const type = schema.type ?? (schema.properties ? 'object' : schema.items ? 'array' : undefined);
  if (Array.isArray(type)) return fc.oneof(...type.map((t: string) => validBySchema({ ...schema, type: t }, hints, depth)));
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER);
      const max = Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER);
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
    }
    case 'number': {
      const min = schema.minimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'string':
      return validString(schema);
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_ARRAY, MAX_ARRAY));
      return fc.array(valid(schema.items, hints, undefined, depth + 1), { minLength, maxLength });
    }
    case 'object':
      return validObject(schema, hints, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING));
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    const generable = new RegExp(withoutLookarounds(schema.pattern), 'u');
    const lengthOk = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
    // an unanchored pattern lets anything follow the match: control characters there reach headers and file names
    return fc.noShrink(
      fc
        .tuple(fc.stringMatching(generable), fc.constantFrom('', '', '', '', '\r\nX-Injected: 1', '\u0000', '\t', ' ;x=y', '/../../x'))
        .map(([matched, tail]) => matched + tail)
        .filter((s) => lengthOk(s) && pattern.test(s)),
    );
  }
  return fc.string({ minLength, maxLength, unit: fc.oneof({ arbitrary: fc.constantFrom(...'abcxyz019 +-_.@'), weight: 4 }, { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), weight: 1 }) });
}

/**
 * A pattern without its lookaheads (`(?!…)`, `(?=…)`), which fast-check cannot generate from: strings are generated
 * from the rest and kept when the whole pattern matches them.
 */
export function withoutLookarounds(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (pattern[i] === '[') {
      const end = classEnd(pattern, i);
      out += pattern.slice(i, end + 1);
      i = end;
    } else if (pattern.startsWith('(?!', i) || pattern.startsWith('(?=', i)) {
      i = groupEnd(pattern, i);
    } else out += pattern[i];
  }
  return out;
}

function classEnd(pattern: string, start: number): number {
  for (let i = start + 1; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return pattern.length - 1;
}

function groupEnd(pattern: string, start: number): number {
  let depth = 0;
  for (let i = start; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '[') i = classEnd(pattern, i);
    else if (pattern[i] === '(') depth++;
    else if (pattern[i] === ')' && --depth === 0) return i;
  }
  return pattern.length - 1;
}

function validObject(schema: Schema, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>(schema.required ?? []);
  const names = Object.keys(properties);
  // all required fields and a few optional ones: with every optional field present half the time, routes whose
  // fields exclude each other (a text message has no `url`) would never see a valid body
  const optional = names.filter((n) => !required.has(n));
  const record = fc
    .tuple(
      fc.record(Object.fromEntries(names.map((name) => [name, valid(properties[name], hints, name, depth + 1)]))),
      fc.subarray(optional, { maxLength: Math.min(optional.length, 3) }),
    )
    .map(([all, picked]) => Object.fromEntries(Object.entries(all).filter(([k]) => required.has(k) || picked.includes(k))));
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object' && depth < 3) {
    return fc.tuple(record, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), valid(extra, hints, undefined, depth + 1), { maxKeys: 3 })).map(([r, d]) => ({ ...d, ...r }));
  }
  return record;
}

type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const k of Object.keys(value)) pathsOf((value as Record<string, unknown>)[k], [...prefix, k], out);
  return out;
}

function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function setAt(root: unknown, path: Path, change: (parent: any, key: string | number) => void): unknown {
  if (path.length === 0) {
    const box = { v: root };
    change(box, 'v');
    return box.v;
  }
  const copy = cloneJson(root);
  let parent: any = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  change(parent, path[path.length - 1]!);
  return copy;
}

export type Mutation = 'replace' | 'delete' | 'unknown-field' | 'proto-key' | 'constructor-key' | 'wrap-array' | 'stringify';

/** A valid value with exactly one thing wrong, at a random place inside it. */
export function almostValid(validValues: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(validValues, fc.nat(), fc.constantFrom<Mutation>('replace', 'replace', 'replace', 'delete', 'unknown-field', 'proto-key', 'constructor-key', 'wrap-array', 'stringify'), nastyJson)
    .map(([value, index, mutation, nasty]) => mutate(value, index, mutation, expandRawObjects(nasty)));
}

function mutate(value: unknown, index: number, mutation: Mutation, nasty: unknown): unknown {
  const paths = pathsOf(value);
  const objects = paths.filter((p) => {
    const target = p.reduce<any>((v, k) => v?.[k], value);
    return target && typeof target === 'object' && !Array.isArray(target);
  });
  const path = paths[index % paths.length]!;
  switch (mutation) {
    case 'replace':
      return setAt(value, path, (parent, key) => (parent[key] = nasty));
    case 'delete':
      return path.length ? setAt(value, path, (parent, key) => (Array.isArray(parent) ? parent.splice(Number(key), 1) : delete parent[key])) : undefined;
    case 'wrap-array':
      return setAt(value, path, (parent, key) => (parent[key] = [parent[key]]));
    case 'stringify':
      return setAt(value, path, (parent, key) => (parent[key] = JSON.stringify(parent[key]) ?? 'undefined'));
    default: {
      const where = objects.length ? objects[index % objects.length]! : [];
      const name = mutation === 'proto-key' ? '__proto__' : mutation === 'constructor-key' ? 'constructor' : 'fzUnknown';
      const payload = mutation === 'constructor-key' ? { prototype: pollutionPayload } : mutation === 'proto-key' ? pollutionPayload : nasty;
      return setAt(value, where, (parent, key) => {
        const target = parent[key];
        if (!target || typeof target !== 'object') return void (parent[key] = { [name]: payload });
        Object.defineProperty(target, name, { value: payload, enumerable: true, writable: true, configurable: true });
      });
    }
  }
}

/** Any JSON at all, and text that is not JSON. */
export const junkBodyText: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('', ' ', '\n', '{', '[', '{"a":', '{"a":1,}', "{'a':1}", 'undefined', 'NaN', '\ufeff{}', '{}{}', 'null', '""',
    '[' .repeat(100_000), '{"__proto__":{"fzPolluted":true}}', '1e400', '-'.repeat(1000), '\u0000', '{"a":"\\ud800"}', '{"a":"\\u00zz"}'),
  fc.nat({ max: 2 * 1024 * 1024 }).map((n) => `{"a":"${'x'.repeat(n)}"}`),
);

// ---------------------------------------------------------------------------------------------------------------
// Path segments and query strings: what reaches the router is text, so odd encodings are generated as raw text.

/**
 * Longest text put in a URL: Node's HTTP parser answers 431 itself (before the app) when the request line and headers
 * pass 16 KB, so longer URLs test Node, not the daemon.
 */
const URL_TEXT_MAX = 6000;

export const ODD_ENCODINGS = ['%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '%00', '%u0041', '%2F', '%2e%2e', '%252F', '+', '%20', '%0A', '%EF%BF%BF', '%F0%9F%98%80', '%ED%A0%80'];

const encodeSegment = (value: unknown): string => encodeURIComponent(String(value));

/** A path segment: valid for its schema, almost valid, or odd. Returned already encoded (raw text for the URL). */
export function segment(schema: Schema | undefined, hints: Hints, name: string, mode: 'valid' | 'almost' | 'junk'): fc.Arbitrary<string> {
  const good = valid(schema, hints, name).map(encodeSegment);
  if (mode === 'valid') return good;
  const odd = fc.oneof(
    fc.constantFrom(...ODD_ENCODINGS),
    fc.tuple(good, fc.constantFrom(...ODD_ENCODINGS), fc.boolean()).map(([g, o, before]) => (before ? o + g : g + o)),
    fc.constantFrom('-1', '0', '1e400', 'NaN', '99999999999999999999999', '0x10', '1.5', '__proto__', 'constructor', 'prototype', '.', '..', 'x'.repeat(URL_TEXT_MAX)).map(encodeSegment),
    fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeSegment),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map(encodeSegment),
  );
  return mode === 'almost' ? fc.oneof({ arbitrary: good, weight: 1 }, { arbitrary: odd, weight: 2 }) : odd;
}

/** A query string (without `?`): valid parameters, one wrong, unknown or duplicated, odd encodings. */
export function queryString(schema: Schema | undefined, hints: Hints, mode: 'valid' | 'almost' | 'junk'): fc.Arbitrary<string> {
  const validQuery = (schema ? valid(schema, hints) : fc.constant({})) as fc.Arbitrary<Record<string, unknown>>;
  const encode = (q: Record<string, unknown>) => Object.entries(q).map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`);
  if (mode === 'valid') return validQuery.map((q) => encode(q).join('&'));
  const names = Object.keys((schema?.properties ?? {}) as object);
  const name = names.length ? fc.constantFrom(...names) : fc.constant('limit');
  const badValue = fc.oneof(
    fc.constantFrom('', '-1', '0', '1e400', 'NaN', 'Infinity', '99999999999999999999', '9007199254740993', '0x10', ' 1', '1.5', 'true', 'null', '[]', '__proto__', 'x'.repeat(URL_TEXT_MAX)).map(encodeSegment),
    fc.constantFrom(...ODD_ENCODINGS),
    fc.string({ unit: 'grapheme', maxLength: 10 }).map(encodeSegment),
  );
  const extra = fc.oneof(
    fc.tuple(name, badValue).map(([k, v]) => `${k}=${v}`),
    fc.tuple(name, badValue, badValue).map(([k, a, b]) => `${k}=${a}&${k}=${b}`),
    fc.tuple(name, validQuery).map(([k, q]) => [...encode(q), ...encode(q), `${k}`].join('&')),
    fc.constantFrom('__proto__=x', '__proto__[fzPolluted]=1', 'constructor[prototype][fzPolluted]=1', 'fzUnknown=1', '&&&', '=', '==x', 'a[]=1&a[]=2', '%=%', 'limit', ';limit=1'),
    fc.tuple(fc.constantFrom(...ODD_ENCODINGS), fc.constantFrom(...ODD_ENCODINGS)).map(([k, v]) => `${k}=${v}`),
  );
  return fc.tuple(validQuery, extra).map(([q, e]) => [...encode(q), e].join('&'));
}
