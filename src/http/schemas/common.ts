// Schema pieces shared by several route files.
import { channelRef, groupRef, idString } from './id-formats.js';

export { channelRef, groupRef };

export const SESSION_NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$';

export const sessionName = { type: 'string', minLength: 1, maxLength: 64, pattern: SESSION_NAME_PATTERN } as const;

/** A write body that repeats the session of its path (SPEC §4): it must be that session (`x-equals-path-parameter`). */
export const bodySession = {
  ...sessionName,
  description: 'the session named in the path, repeated (SPEC §4); another is refused (400 VALIDATION_FAILED naming /session)',
  'x-equals-path-parameter': 'session',
} as const;

export const sessionParams = {
  type: 'object',
  required: ['session'],
  properties: { session: sessionName },
} as const;

/** The largest `offset` a list takes: far past any real list, and small enough for SQLite and exact in a double. */
export const MAX_OFFSET = 1_000_000_000;

export const pagingProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 1000 },
  offset: { type: 'integer', minimum: 0, maximum: MAX_OFFSET },
} as const;

/** Query parameters are closed everywhere: an unknown one (a typo like `limt`) is a 400 naming it. */
export const paging = {
  type: 'object',
  additionalProperties: false,
  properties: pagingProperties,
} as const;

/** The query schema of a route that takes no query parameters (the router applies it when a route names none). */
export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const emptyBody = { type: 'object', additionalProperties: false, properties: {} } as const;

export const phoneNumber = idString('wa-phone-number', 32);
/** a phone number or its user JID */
export const phoneOrUserJid = idString('wa-phone');
/** a person: phone number, user JID or LID */
export const personId = idString('wa-person');
/** any chat: a person, group, channel or status@broadcast */
export const chatId = idString('wa-chat');
export const groupId = idString('wa-group');

/** A pattern of a comma list of these words (spaces around items and empty items ignored, as the routes split them). */
export function csvOf(words: readonly string[]): string {
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return `^[\\s,]*(?:(?:${escaped.join('|')})\\s*(?:,[\\s,]*|$))*$`;
}

/**
 * "When `field` is one of `values`, these fields are required", as JSON Schema. The properties are repeated in the
 * subschemas and `unevaluatedProperties: true` said, for linters that read each subschema alone.
 */
export function requiredWhen(field: string, values: readonly string[], required: readonly string[], properties: Record<string, object>, message: string) {
  return {
    if: { required: [field], properties: { [field]: values.length === 1 ? { const: values[0] } : { enum: values } }, unevaluatedProperties: true },
    then: {
      required,
      'x-required-message': message,
      properties: Object.fromEntries(required.map((name) => [name, properties[name]])),
      unevaluatedProperties: true,
    },
  } as const;
}
