// Schemas of the operations routes: backups, the status report and the recent activity.
import { BACKUP_NAME_PATTERN } from '../../ops/backups.js';
import { ACTIVITY_WINDOWS, type ActivityWindow } from '../../ops/activity.js';

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

export interface ActivityQuery {
  window: ActivityWindow;
}

export const activityQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    window: {
      enum: Object.keys(ACTIVITY_WINDOWS),
      default: '1h',
      description: 'how far back, counted by the minute (the current minute included)',
      examples: ['1h'],
    },
  },
} as const;
