// The daemon's pino logger; modules take a child logger named after themselves.
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Fields that hold a secret wherever they appear in a logged object (top level or one level down): censored, as a
 * safety net behind the rule that no code logs a key, token, secret or credential in the first place.
 */
export const REDACTED_FIELDS = [
  'authorization',
  'masterKey',
  'encryptionKey',
  'hmacKey',
  'secretAccessKey',
  'signingSecret',
  'token',
  'password',
  'creds',
  'privKey',
  'noiseKey',
  'signedIdentityKey',
  'advSecretKey',
];

export const REDACT_PATHS = [
  ...REDACTED_FIELDS.flatMap((field) => [field, `*.${field}`]),
  'headers.authorization',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.s3.secretAccessKey',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
