// Schemas of the session routes (SPEC §4 "Sessions").
import { ENGINE_NAMES } from '../../engine/types.js';
import { phoneNumber, sessionName } from './common.js';
import { urlPattern } from './url-patterns.js';

export interface CreateSessionBody {
  name: string;
  start?: boolean;
  proxy?: string;
  engine?: 'baileys' | 'sandbox';
  config?: Record<string, unknown>;
}

/** the longest `config.calls.replyText` (stored with the session and shown on every read of it) */
export const CALL_REPLY_MAX = 4096;
const TEXT_CHAR = '[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]';

/** `config.calls`: what the session does with incoming calls. */
export const callsConfig = {
  type: 'object',
  additionalProperties: false,
  required: ['reject'],
  properties: {
    reject: { type: 'boolean', description: 'reject every incoming call at once (call.rejected with endedBy `auto`)' },
    replyText: {
      type: 'string',
      minLength: 1,
      maxLength: CALL_REPLY_MAX,
      pattern: `^${TEXT_CHAR}*[^\\s\\x00-\\x1f\\x7f]${TEXT_CHAR}*$`,
      description: 'with `reject: true`, the text message the caller gets after the reject (tab, CR and LF allowed; no other control characters)',
      'x-invalid-message': 'must be text that is not blank, without control characters other than tab, CR and LF',
    },
  },
  description: 'incoming calls: `{reject, replyText?}`',
} as const;

/** `config.governor`: the session's overrides of the send governor's settings (gateway.yaml `governor`). */
export const governorConfig = {
  type: 'object',
  additionalProperties: false,
  properties: {
    exempt: { type: 'boolean', description: 'true: the session is not paced, capped or queued (master key only)' },
    perMinute: { type: 'integer', minimum: 1, maximum: 1000000, description: 'sends a minute once the burst is spent' },
    burst: { type: 'integer', minimum: 1, maximum: 1000000, description: 'sends that may go at once before the pace applies' },
    jitterPercent: { type: 'integer', minimum: 0, maximum: 100, description: 'a queued send waits a random 0..jitterPercent % of one pace interval more' },
    recipientGapSeconds: { type: 'number', minimum: 0, maximum: 3600, description: 'two sends to the same chat are at least this far apart' },
    firstContactsPerDay: { type: 'integer', minimum: 0, maximum: 100000, description: 'first messages a UTC day to people who never wrote (past the warm-up)' },
    warmup: { type: 'array', maxItems: 30, items: { type: 'integer', minimum: 0, maximum: 100000 }, description: 'the same cap on the days since pairing: [day of pairing, next day, …]' },
    typing: { type: 'boolean', description: 'a typing indicator and a pause before each send (as `safeMode`)' },
  },
  description:
    'the send governor for this session: each key given overrides the gateway\'s `governor` setting; looser than the session\'s current settings (a faster pace, a bigger burst, less jitter, a shorter gap, a higher cap, typing off, `exempt`) only with the master key',
} as const;

/** The settings of a session's `config` (closed: anything else, of any size, would be stored and echoed on every read). */
const configProperties = {
  safeMode: { type: 'boolean', description: 'a typing indicator and a pause before each send (the same switch as `governor.typing`, which wins when both are set)' },
  governor: governorConfig,
  markOnlineOnConnect: { type: 'boolean' },
  ignoreStatus: { type: 'boolean' },
  calls: callsConfig,
} as const;

export const createSessionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: sessionName,
    start: { type: 'boolean' },
    proxy: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      // what checkProxyUrl (src/net/url-guard.ts) and checkProxy read before the host policy: the scheme, then a host (credentials allowed)
      pattern: urlPattern(['http', 'https', 'socks5', 'socks5h'], { credentials: true }),
      description: 'http://, https://, socks5:// or socks5h:// with a host (credentials allowed); a public host unless private targets are allowed (400 PROXY_URL_REJECTED)',
      'x-invalid-message': 'is not a proxy URL (http, https, socks5 or socks5h://[user:password@]host[:port])',
    },
    engine: { enum: ENGINE_NAMES },
    config: {
      type: 'object',
      additionalProperties: false,
      properties: { engine: { enum: ENGINE_NAMES }, ...configProperties },
    },
  },
} as const;

export const qrQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { enum: ['text', 'image'] } },
} as const;

export const pairingCodeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['phoneNumber'],
  properties: { phoneNumber },
} as const;

export interface UpdateSessionBody {
  config: Record<string, unknown>;
}

/** PATCH /api/sessions/{session}: each setting given replaces the stored one, `null` removes it, the rest stay. */
export const updateSessionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['config'],
  properties: {
    config: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        safeMode: { type: ['boolean', 'null'] },
        markOnlineOnConnect: { type: ['boolean', 'null'] },
        ignoreStatus: { type: ['boolean', 'null'] },
        calls: { ...callsConfig, type: ['object', 'null'] },
        governor: { ...governorConfig, type: ['object', 'null'] },
      },
      description: 'the settings to change: each given replaces the stored one, `null` removes it, the others stay (the engine cannot change)',
    },
  },
} as const;
