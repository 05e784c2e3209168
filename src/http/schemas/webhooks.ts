// Schemas of the webhook routes (SPEC §4 "Webhooks"); the rules a schema cannot say (URL policy, header names) live in src/webhooks/registry.ts.
import { EVENT_TYPES } from '../../events/catalogue.js';
import { MAX_ATTEMPTS, MAX_DELAY_SECONDS, RETRY_POLICY_NAMES, type RetrySettings } from '../../webhooks/retry-policy.js';
import { MAX_HEADERS, MIN_HMAC_KEY_LENGTH } from '../../webhooks/registry.js';
import { SIGNATURE_SCHEMES, type SignatureScheme } from '../../store/webhooks.js';
import { SESSION_NAME_PATTERN, pagingProperties, sessionName } from './common.js';

export interface WebhookHeaderBody {
  name: string;
  value: string;
}

export interface CreateWebhookBody {
  url: string;
  events?: string[];
  session?: string;
  enabled?: boolean;
  headers?: WebhookHeaderBody[];
  retries?: Partial<RetrySettings>;
  hmacKey?: string;
  signatureScheme?: SignatureScheme;
}

export type UpdateWebhookBody = Partial<Omit<CreateWebhookBody, 'session'>> & { session?: string | null };

const url = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const events = { type: 'array', maxItems: EVENT_TYPES.length + 1, items: { enum: [...EVENT_TYPES, '*'] } } as const;
const headers = {
  type: 'array',
  maxItems: MAX_HEADERS,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, value: { type: 'string', maxLength: 4096 } },
  },
} as const;
const retries = {
  type: 'object',
  additionalProperties: false,
  properties: {
    attempts: { type: 'integer', minimum: 0, maximum: MAX_ATTEMPTS },
    delaySeconds: { type: 'integer', minimum: 0, maximum: MAX_DELAY_SECONDS },
    policy: { enum: RETRY_POLICY_NAMES },
  },
} as const;
const hmacKey = { type: 'string', minLength: MIN_HMAC_KEY_LENGTH, maxLength: 512 } as const;
const signatureScheme = { enum: SIGNATURE_SCHEMES } as const;

export const createWebhookBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url, events, session: sessionName, enabled: { type: 'boolean' }, headers, retries, hmacKey, signatureScheme },
} as const;

export const updateWebhookBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url,
    events,
    session: { type: ['string', 'null'], minLength: 1, maxLength: 64, pattern: SESSION_NAME_PATTERN },
    enabled: { type: 'boolean' },
    headers,
    retries,
    hmacKey,
    signatureScheme,
  },
} as const;

const webhookId = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;

export const webhookParams = {
  type: 'object',
  required: ['id'],
  properties: { id: webhookId },
} as const;

export const deliveryParams = {
  type: 'object',
  required: ['id', 'deliveryId'],
  properties: { id: webhookId, deliveryId: { type: 'string', minLength: 1, maxLength: 64 } },
} as const;

export const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: ['pending', 'succeeded', 'failed'] },
    ...pagingProperties,
  },
} as const;
