// ajv validators for route schemas, and the translation of ajv errors into VALIDATION_FAILED details that name the field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { GatewayError, ValidationError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { StreamedBase64 } from '../media/base64.js';
import { ID_FORMATS, idFormatMessage } from './schemas/id-formats.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const withIdFormats = (ajv: Ajv): Ajv => {
  for (const [name, format] of Object.entries(ID_FORMATS)) ajv.addFormat(name, { type: 'string', validate: format.validate });
  return ajv;
};

let bodyAjv: Ajv | undefined;
/** query strings and path segments arrive as strings: coerce them to the schema's types */
let textAjv: Ajv | undefined;
const ajvFor = (source: 'body' | 'query' | 'params'): Ajv =>
  source === 'body'
    ? (bodyAjv ??= withIdFormats(addFormats(new Ajv({ allErrors: true, strict: false, verbose: true }))))
    : (textAjv ??= withIdFormats(addFormats(new Ajv({ allErrors: true, strict: false, verbose: true, coerceTypes: true, useDefaults: true }))));

/**
 * Extensions a schema may carry to keep its 400s as clear as the hand-written checks were (ajv's own sentences:
 * "must match exactly one schema in oneOf", "must NOT be valid"):
 * - `x-invalid-message`: the sentence for a failed `not`, `oneOf`, `anyOf`, `pattern` or `format` of that schema
 *   (what failed inside a oneOf/anyOf/not it explains is not listed);
 * - `x-invalid-path`: where that sentence points, under the value (default: the value itself);
 * - `x-csv-of`: the words of a comma list (with its pattern): a 400 names the unknown ones;
 * - `x-required-message`: the sentence for a missing property that schema requires;
 * - `x-error-code`: a 400 code other than VALIDATION_FAILED for a value this schema refuses by its value (pattern,
 *   format, enum, bounds: INVALID_TTL), when nothing else is wrong with the request, and
 *   `x-error-message` the error's message then (the one the check after the schema gives, WEBHOOK_URL_REJECTED's).
 */
interface MessageExtensions {
  'x-invalid-message'?: string;
  'x-invalid-path'?: string;
  'x-required-message'?: string;
  'x-error-code'?: ErrorCode;
  'x-error-message'?: string;
}
const extensionsOf = (e: ErrorObject) => (e.parentSchema ?? {}) as MessageExtensions;
/** x-error-code names what the value is, not its shape: a wrong type or length stays VALIDATION_FAILED */
const CODED_KEYWORDS = new Set(['pattern', 'format', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);
const hasOwnCode = (e: ErrorObject) => CODED_KEYWORDS.has(e.keyword) && extensionsOf(e)['x-error-code'] !== undefined;

export type Validator = (value: unknown) => unknown;

/** Compiles on first use: compiling the validators of every route at start took about 200 ms and several MB. */
export function compileValidator(schema: object, source: 'body' | 'query' | 'params'): Validator {
  let compiled: ValidateFunction | undefined;
  return (value) => {
    const validate = (compiled ??= ajvFor(source).compile(schema));
    if (source === 'body' && value === undefined) {
      if (acceptsUndefined(schema)) return {};
      throw new ValidationError('a JSON request body is required', [{ path: '', message: 'is required' }]);
    }
    const textual = source === 'body' ? [] : textProblems(value as Record<string, unknown>, schema);
    if (textual.length === 0 && validate(source === 'body' ? withStandIns(value) : value)) return value;
    const errors = textual.length ? [] : mostSpecific(validate.errors ?? []);
    const details = [...textual, ...errors.map((e) => detailOf(e, source))];
    const unique = details.filter((d, i) => details.findIndex((o) => o.path === d.path && o.message === d.message) === i);
    const [first] = unique;
    const message = first ? `${labelOf(first.path, source)} ${first.message}` : `invalid ${source}`;
    // a code of its own only when that rule is all that refuses the value (an empty url is a plain VALIDATION_FAILED)
    const coded = errors.length > 0 && errors.every(hasOwnCode) ? errors[0] : undefined;
    if (coded) throw new GatewayError(extensionsOf(coded)['x-error-code']!, extensionsOf(coded)['x-error-message'] ?? message, unique);
    throw new ValidationError(message, unique);
  };
}

/** A body as the schema sees it: a field decoded while it streamed in (a StreamedBase64) stands for its text. */
function withStandIns(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (field instanceof StreamedBase64) (copy ??= { ...value })[key] = field.standIn;
  }
  return copy ?? value;
}

/** decimal digits, with a sign only before a number that is not zero (`-0` is no way to write 0) */
const INTEGER_TEXT = /^(?!-0+$)-?\d{1,16}$/;

/**
 * Query strings and path segments, before ajv coerces them: a repeated key (`?limit=1&limit=2`) arrives as an array,
 * and `Number()` would read `0x10`, ` 5`, `1e3` or `Infinity` as numbers; an integer parameter takes decimal digits only (and no `-0`).
 */
function textProblems(value: Record<string, unknown>, schema: object): ErrorDetail[] {
  const properties = ((schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}) as Record<string, { type?: unknown }>;
  const problems: ErrorDetail[] = [];
  for (const [key, raw] of Object.entries(value)) {
    const path = `/${pointerEscape(key)}`;
    if (Array.isArray(raw)) problems.push({ path, message: 'is given more than once' });
    else if (Object.hasOwn(properties, key) && properties[key]!.type === 'integer' && typeof raw === 'string' && !INTEGER_TEXT.test(raw)) {
      problems.push({ path, message: 'must be an integer (decimal digits)' });
    }
  }
  return problems;
}

function pointerEscape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Drops what a failed oneOf/anyOf says about itself and its other branches ("s3 must be null", "must match exactly
 * one schema", "must match \"else\" schema") when a branch has errors deeper in: those name the field that is actually wrong.
 */
function mostSpecific(all: ErrorObject[]): ErrorObject[] {
  // a oneOf/anyOf/not that explains itself (x-invalid-message) speaks for what failed inside it
  const explained = all.filter((e) => ['oneOf', 'anyOf', 'not'].includes(e.keyword) && extensionsOf(e)['x-invalid-message'] !== undefined);
  const errors = all.filter((e) => !explained.some((x) => x !== e && e.schemaPath.startsWith(`${x.schemaPath}/`)));
  const hasDeeper = (e: ErrorObject) => errors.some((other) => other.instancePath.startsWith(`${e.instancePath}/`));
  const isAlternativeNoise = (e: ErrorObject) =>
    e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if' || (e.keyword === 'type' && /\/(oneOf|anyOf)\/\d+\/type$/.test(e.schemaPath));
  // an `if` fails only with what its then/else says: that is the error
  return errors.filter((e) => !(isAlternativeNoise(e) && !explained.includes(e) && (hasDeeper(e) || (e.keyword === 'if' && errors.length > 1))));
}

/**
 * "Exactly one of url or base64" (a oneOf of `{required: [field]}`) points at the field to add when none is given
 * (the first), or at the one too many when several are.
 */
function exactlyOnePath(e: ErrorObject): string | undefined {
  if (e.keyword !== 'oneOf') return undefined;
  const alternatives = (e.schema as Array<{ required?: string[] }> | undefined) ?? [];
  const fields = alternatives.map((alt) => alt.required?.[0]);
  if (fields.some((f) => f === undefined)) return undefined;
  const passing = (e.params as { passingSchemas?: number[] | null }).passingSchemas;
  return `/${pointerEscape(fields[passing ? passing[1]! : 0]!)}`;
}

function acceptsUndefined(schema: object): boolean {
  return (schema as { required?: unknown[] }).required === undefined && (schema as { type?: string }).type === 'object';
}

function labelOf(path: string, source: string): string {
  const field = path.replace(/^\//, '').replace(/\//g, '.');
  if (source === 'body') return field || 'body';
  return field ? `${source === 'query' ? 'query parameter' : 'path parameter'} ${field}` : source;
}

function detailOf(e: ErrorObject, source: string): ErrorDetail {
  const params = e.params as Record<string, unknown>;
  const own = extensionsOf(e);
  const words = (e.parentSchema as { 'x-csv-of'?: string[] } | undefined)?.['x-csv-of'];
  if (e.keyword === 'pattern' && words && typeof e.data === 'string') {
    const unknown = e.data.split(',').map((item) => item.trim()).filter((item) => item && !words.includes(item));
    if (unknown.length) return { path: e.instancePath, message: `unknown: ${unknown.join(', ')} (known: ${words.join(', ')})` };
  }
  if (own['x-invalid-message'] !== undefined && ['not', 'oneOf', 'anyOf', 'pattern', 'format'].includes(e.keyword)) {
    return { path: `${e.instancePath}${own['x-invalid-path'] ?? exactlyOnePath(e) ?? ''}`, message: own['x-invalid-message'] };
  }
  switch (e.keyword) {
    case 'required':
      return { path: `${e.instancePath}/${pointerEscape(String(params.missingProperty))}`, message: own['x-required-message'] ?? 'is required' };
    case 'additionalProperties':
      return {
        path: `${e.instancePath}/${pointerEscape(String(params.additionalProperty))}`,
        message: source === 'query' ? 'is not a known query parameter' : 'is not a known field',
      };
    case 'enum':
      return { path: e.instancePath, message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}` };
    case 'type':
      return { path: e.instancePath, message: `must be ${String(params.type)}` };
    case 'format':
      return { path: e.instancePath, message: idFormatMessage(String(params.format)) ?? e.message ?? 'is invalid' };
    case 'pattern':
      return { path: e.instancePath, message: `must match ${String(params.pattern)}` };
    case 'errorMessage':
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
    default:
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
  }
}
