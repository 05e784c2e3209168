// Schemas of the group routes (SPEC §4 "Groups", limits of §8: name ≤ 25 characters, ≤ 256 participants per request).
import { personId, sessionName } from './common.js';

export const groupParams = {
  type: 'object',
  required: ['session', 'groupId'],
  properties: { session: sessionName, groupId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

export const createGroupBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'name'],
  properties: {
    session: sessionName,
    name: { type: 'string', minLength: 1, maxLength: 25 },
    participants: { type: 'array', maxItems: 256, items: personId },
  },
} as const;

export const subjectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'value'],
  properties: { session: sessionName, value: { type: 'string', minLength: 1, maxLength: 25 } },
} as const;

/** An empty value clears the description. */
export const descriptionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'value'],
  properties: { session: sessionName, value: { type: 'string', maxLength: 2048 } },
} as const;

export const pictureBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    session: sessionName,
    url: { type: 'string', minLength: 1, maxLength: 4096 },
    base64: { type: 'string', minLength: 1 },
  },
} as const;

export const participantsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'participants'],
  properties: { session: sessionName, participants: { type: 'array', minItems: 1, maxItems: 256, items: personId } },
} as const;

export const joinQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['inviteCode'],
  properties: { inviteCode: { type: 'string', minLength: 1, maxLength: 1024 } },
} as const;

export const joinBody = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: { session: sessionName, code: { type: 'string', minLength: 1, maxLength: 1024 } },
} as const;
