// Schemas of the media routes and of the admin settings.
import { sessionName } from './common.js';

export const mediaParams = {
  type: 'object',
  required: ['session', 'mediaId'],
  properties: { session: sessionName, mediaId: { type: 'string', format: 'uuid' } },
} as const;

export const settingsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    autoPersist: { type: 'boolean', description: 'upload received media to S3 as it arrives; needs S3 settings (stored, or in this body)' },
    s3: {
      description:
        'null removes the storage; an object merges into the stored settings, so `bucket`, `accessKeyId` and `secretAccessKey` are required while none are stored (400 VALIDATION_FAILED naming the first one missing)',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            endpoint: { type: 'string', pattern: '^https?://', maxLength: 2048 },
            region: { type: 'string', minLength: 1, maxLength: 64 },
            bucket: { type: 'string', minLength: 3, maxLength: 63, pattern: '^[a-z0-9][a-z0-9.-]+[a-z0-9]$' },
            accessKeyId: { type: 'string', minLength: 1, maxLength: 256 },
            secretAccessKey: { type: 'string', minLength: 1, maxLength: 512 },
            forcePathStyle: { type: 'boolean' },
            keyPrefix: { type: 'string', maxLength: 512, pattern: '^[^\\\\]*$' },
            publicBaseUrl: { type: 'string', pattern: '^https?://', maxLength: 2048 },
            presignExpiresSeconds: { type: 'integer', minimum: 1, maximum: 604800 },
          },
        },
      ],
    },
  },
} as const;
