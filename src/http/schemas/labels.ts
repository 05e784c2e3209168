// Schemas of the label routes (SPEC §4 "Labels"; bodies of DESIGN §3: {name, color}, {name?, color?}, {chatIds:[…]} or a bare array).
import { idString } from './id-formats.js';
import { sessionName } from './common.js';

export const labelParams = {
  type: 'object',
  required: ['session', 'labelId'],
  properties: { session: sessionName, labelId: { type: 'string', pattern: '^[0-9A-Za-z_-]{1,64}$' } },
} as const;

const name = { type: 'string', minLength: 1, maxLength: 100 } as const;
/** palette index */
const color = { type: 'integer', minimum: 0, maximum: 19 } as const;

export const createLabelBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'color'],
  properties: { name, color },
} as const;

export const updateLabelBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name, color },
} as const;

const chatIds = { type: 'array', minItems: 1, maxItems: 1000, items: idString('wa-person-or-group') } as const;

/** `{chatIds: [...]}`, or the array alone. */
export const labelChatsBody = {
  if: { type: 'array' },
  then: chatIds,
  else: {
    type: 'object',
    additionalProperties: false,
    required: ['chatIds'],
    properties: { chatIds },
  },
} as const;
