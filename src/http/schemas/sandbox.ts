// Schemas of the sandbox control routes (DESIGN §6).
import { STATUS_REASONS } from '../../engine/types.js';
import { phoneNumber } from './common.js';

export const pairBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    phoneNumber,
    pushName: { type: 'string', minLength: 1, maxLength: 100 },
    business: { type: 'boolean' },
    businessName: { type: 'string', minLength: 1, maxLength: 100 },
    code: { type: 'string', pattern: '^[0-9A-Za-z]{4}-?[0-9A-Za-z]{4}$' },
  },
} as const;

export const disconnectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: {
    reason: { enum: STATUS_REASONS.filter((r) => r !== 'SCAN_QR' && r !== 'MANUAL_STOP') },
  },
} as const;
