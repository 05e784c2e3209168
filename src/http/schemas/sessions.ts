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
    /** closed: only the settings below; anything else (of any size) would be stored and echoed on every read */
    config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        engine: { enum: ENGINE_NAMES },
        safeMode: { type: 'boolean' },
        markOnlineOnConnect: { type: 'boolean' },
        ignoreStatus: { type: 'boolean' },
      },
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
