// Schemas of the webhook routes (SPEC §4 "Webhooks"); the rules a schema cannot say (URL policy, header names) live in src/webhooks/registry.ts.
import { EVENT_TYPES } from '../../events/catalogue.js';
import { MAX_ATTEMPTS, MAX_DELAY_SECONDS, RETRY_POLICY_NAMES, type RetrySettings } from '../../webhooks/retry-policy.js';
import { HEADER_VALUE, MAX_HEADERS, MIN_HMAC_KEY_LENGTH, RESERVED_HEADERS, RESERVED_PREFIX, HEADER_NAME } from '../../webhooks/registry.js';
import { SIGNATURE_SCHEMES, type SignatureScheme } from '../../store/webhooks.js';
import { SESSION_NAME_PATTERN, pagingProperties, sessionName } from './common.js';
import { urlPattern } from './url-patterns.js';

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

/** what checkTargetUrl (src/net/url-guard.ts) reads before its host policy: an http(s) URL with a host and no credentials */
/** `[Cc][Oo]…`: a pattern has no case-insensitive flag */
const anyCase = (text: string) => text.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`).replace(/\./g, '\\.');
const RESERVED_NAME_PATTERN = `^(?:(?:${[...RESERVED_HEADERS].map(anyCase).join('|')})$|${anyCase(RESERVED_PREFIX)})`;
const HEADER_VALUE_PATTERN = HEADER_VALUE.source;

const url = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  pattern: urlPattern(['http', 'https'], { credentials: false }),
  description: 'https, on a public host (plain http and private hosts only where webhooks.allowPrivateTargets is set: 400 WEBHOOK_URL_REJECTED otherwise); no username or password',
  'x-error-code': 'WEBHOOK_URL_REJECTED',
  'x-error-message': 'Webhook URL rejected: it is not an http(s) URL with a host and no username or password.',
  'x-invalid-message': 'is not an http(s) URL with a host and no username or password',
} as const;
const events = { type: 'array', maxItems: EVENT_TYPES.length + 1, items: { enum: [...EVENT_TYPES, '*'] } } as const;
const headers = {
  type: 'array',
  maxItems: MAX_HEADERS,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: {
      name: {
        type: 'string',
        minLength: 1,
        maxLength: 256,
        pattern: HEADER_NAME.source,
        description: `an RFC 9110 token; not one the gateway sets (${[...RESERVED_HEADERS].join(', ')}, X-Webhook-*); names are unique ignoring case`,
        'x-invalid-message': "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)",
        allOf: [{ not: { pattern: RESERVED_NAME_PATTERN }, 'x-invalid-message': 'is set by the gateway and cannot be overridden' }],
      },
      value: { type: 'string', maxLength: 4096, pattern: HEADER_VALUE_PATTERN, description: 'no control characters but tab', 'x-invalid-message': 'must not contain control characters (CR, LF, NUL, …)' },
    },
  },
  description: 'custom headers sent with every delivery; names unique ignoring case (400 VALIDATION_FAILED otherwise)',
  'x-unique-ignoring-case': 'name',
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

// the largest id the stores hold (PostgreSQL's integer column): a larger one is refused as invalid, not looked up
const webhookId = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

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
