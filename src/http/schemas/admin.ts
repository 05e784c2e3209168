// Schemas of the operations routes: backups and the status report.
import { BACKUP_NAME_PATTERN } from '../../ops/backups.js';

export interface CreateBackupBody {
  withMedia?: boolean;
}

export const createBackupBody = {
  type: 'object',
  additionalProperties: false,
  properties: { withMedia: { type: 'boolean', description: 'also copy the media blobs into `<backup>-media`' } },
} as const;

export const backupParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', pattern: BACKUP_NAME_PATTERN, maxLength: 64 } },
} as const;
