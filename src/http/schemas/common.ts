// Schema pieces shared by several route files.
export const SESSION_NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$';

export const sessionName = { type: 'string', minLength: 1, maxLength: 64, pattern: SESSION_NAME_PATTERN } as const;

export const sessionParams = {
  type: 'object',
  required: ['session'],
  properties: { session: sessionName },
} as const;

export const paging = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 1000 },
    offset: { type: 'integer', minimum: 0 },
  },
} as const;

export const emptyBody = { type: 'object', additionalProperties: false, properties: {} } as const;

export const phoneNumber = { type: 'string', minLength: 5, maxLength: 32, pattern: '^\\+?[0-9 ()-.]{5,31}$' } as const;
