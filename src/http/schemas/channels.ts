// Schemas of the channel routes (SPEC §4 "Channels").
import { bodySession, channelRef, sessionName } from './common.js';

export const channelParams = {
  type: 'object',
  required: ['session', 'channelId'],
  properties: { session: sessionName, channelId: channelRef },
} as const;

export const createChannelBody = {
  type: 'object',
  additionalProperties: false,
  required: ['session', 'name'],
  properties: {
    session: bodySession,
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: 'string', maxLength: 2048 },
    profileUrl: { type: 'string', minLength: 1, maxLength: 4096 },
  },
} as const;
