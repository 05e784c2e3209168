// Schemas of the group routes (SPEC §4 "Groups", limits of §8: name ≤ 25 characters, ≤ 256 participants per request).
import type { RuleBeyondSchema } from '../types.js';
import { bodySession, groupRef, personId, sessionName } from './common.js';

export const groupParams = {
  type: 'object',
  required: ['session', 'groupId'],
  properties: { session: sessionName, groupId: groupRef },
} as const;

export const createGroupBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'name'],
  properties: {
    session: bodySession,
    name: { type: 'string', minLength: 1, maxLength: 25, pattern: '\\S', 'x-invalid-message': 'must not be blank' },
    participants: { type: 'array', maxItems: 256, items: personId },
  },
} as const;

export const subjectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'value'],
  properties: { session: bodySession, value: { type: 'string', minLength: 1, maxLength: 25, pattern: '\\S', 'x-invalid-message': 'must not be blank' } },
} as const;

/** An empty value clears the description. */
export const descriptionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'value'],
  properties: { session: bodySession, value: { type: 'string', maxLength: 2048 } },
} as const;

/** exactly one of url or base64 */
export const pictureBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    session: bodySession,
    url: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\s]+(?:[/?#].*)?$', 'x-error-code': 'MEDIA_URL_REJECTED', 'x-invalid-message': 'is not an http(s) URL with a host and no credentials', description: 'where to fetch the picture: https (http only where private targets are allowed), a public host; JPEG or PNG, ≤ 5 MB' },
    base64: { type: 'string', minLength: 1, contentEncoding: 'base64', contentMediaType: 'image/jpeg', description: 'the picture, base64 (or a data: URI); JPEG or PNG, ≤ 5 MB' },
  },
  oneOf: [{ required: ['url'] }, { required: ['base64'] }],
  'x-invalid-message': 'exactly one of url or base64 is required',
} as const;

export const participantsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'participants'],
  properties: { session: bodySession, participants: { type: 'array', minItems: 1, maxItems: 256, items: personId } },
} as const;

/** src/chats/ids.ts inviteCode(): 6–64 letters, digits, - or _, spaces around ignored; never the link */
const INVITE_CODE_PATTERN = '^\\s*[A-Za-z0-9_-]{6,64}\\s*$';
const INVITE_CODE_DESCRIPTION = 'the invite code: the part after https://chat.whatsapp.com/ (6–64 letters, digits, - or _), not the link';
const INVITE_CODE_MESSAGE = 'is not an invite code: send only the invite code (the part after https://chat.whatsapp.com/: 6–64 letters, digits, - or _), not the link';

export const joinQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['inviteCode'],
  properties: { inviteCode: { type: 'string', minLength: 1, maxLength: 1024, pattern: INVITE_CODE_PATTERN, description: INVITE_CODE_DESCRIPTION, 'x-invalid-message': INVITE_CODE_MESSAGE } },
} as const;

export const joinBody = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: { session: bodySession, code: { type: 'string', minLength: 1, maxLength: 1024, pattern: INVITE_CODE_PATTERN, description: INVITE_CODE_DESCRIPTION, 'x-invalid-message': INVITE_CODE_MESSAGE } },
} as const;

/** What a picture may be refused for that the schema cannot say: it reads the file. */
export const PICTURE_RULES: RuleBeyondSchema[] = [
  { path: '/base64', rule: 'must be base64 of a JPEG or PNG of at most 5 MB and 16 megapixels' },
  { path: '/url', rule: 'must lead to a JPEG or PNG of at most 5 MB and 16 megapixels' },
];
