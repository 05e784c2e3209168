// The gateway's error type: one class, a closed union of codes; HTTP statuses live in src/http/error-status.ts.

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'JSON_TOO_DEEP'
  | 'IMAGE_TOO_LARGE'
  | 'WEBHOOK_URL_REJECTED'
  | 'MEDIA_URL_REJECTED'
  | 'PROXY_URL_REJECTED'
  | 'INVALID_TTL'
  | 'INVALID_RECIPIENT_MODE'
  | 'UNAUTHORIZED'
  | 'TOKEN_EXPIRED'
  | 'TOKEN_INVALID'
  | 'NO_CLIENT_RULES'
  | 'FORBIDDEN_SCOPE'
  | 'FORBIDDEN_SESSION'
  | 'ACTION_NOT_ALLOWED'
  | 'SESSION_MISMATCH'
  | 'RECIPIENT_NOT_ALLOWED'
  | 'ORIGIN_NOT_ALLOWED'
  | 'CLIENT_ACCESS_DISABLED'
  | 'NOT_GROUP_ADMIN'
  | 'NOT_GROUP_SUPER_ADMIN'
  | 'NOT_GROUP_MEMBER'
  | 'NOT_MESSAGE_OWNER'
  | 'NOT_CHANNEL_OWNER'
  | 'NOT_BUSINESS_ACCOUNT'
  | 'NOT_FOUND'
  | 'ROUTE_NOT_FOUND'
  | 'SESSION_NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'CALL_NOT_FOUND'
  | 'CHAT_NOT_FOUND'
  | 'GROUP_NOT_FOUND'
  | 'INVITE_NOT_FOUND'
  | 'CHANNEL_NOT_FOUND'
  | 'CONTACT_NOT_FOUND'
  | 'IDENTITY_NOT_FOUND'
  | 'LABEL_NOT_FOUND'
  | 'WEBHOOK_NOT_FOUND'
  | 'DELIVERY_NOT_FOUND'
  | 'KEY_NOT_FOUND'
  | 'CLIENT_RULES_NOT_FOUND'
  | 'PICTURE_NOT_FOUND'
  | 'MEDIA_NOT_FOUND'
  | 'BACKUP_NOT_FOUND'
  | 'BACKUP_NOT_AVAILABLE'
  | 'QR_NOT_AVAILABLE'
  | 'METHOD_NOT_ALLOWED'
  | 'SESSION_EXISTS'
  | 'SESSION_NOT_CONNECTED'
  | 'SESSION_ALREADY_PAIRED'
  | 'CALL_ENDED'
  | 'SESSION_NOT_STARTED'
  | 'NO_HISTORY_ANCHOR'
  | 'SESSION_ON_OTHER_NODE'
  | 'IDEMPOTENCY_KEY_IN_FLIGHT'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_OUTCOME_UNKNOWN'
  | 'NODE_UNREACHABLE'
  | 'STORE_UNAVAILABLE'
  | 'NOT_CLUSTERED'
  | 'NODE_NOT_FOUND'
  | 'LIMIT_REACHED'
  | 'SANDBOX_ONLY'
  | 'NOT_SUPPORTED'
  | 'S3_NOT_CONFIGURED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'MALFORMED_REQUEST'
  | 'REQUEST_TIMEOUT'
  | 'HEADERS_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'MESSAGE_REFUSED'
  | 'MESSAGE_RATE_LIMITED'
  | 'DAILY_CAP_REACHED'
  | 'SEND_CAP_REACHED'
  | 'SEND_QUEUE_FULL'
  | 'QUEUE_ENTRY_NOT_FOUND'
  | 'QUEUE_ENTRY_SENDING'
  | 'SEND_CANCELLED'
  | 'NETWORK_ERROR'
  | 'MEDIA_EXPIRED'
  | 'MEDIA_DOWNLOAD_FAILED'
  | 'S3_ERROR'
  | 'SHUTTING_DOWN'
  | 'SERVER_BUSY'
  | 'INTERNAL';

export interface ErrorDetail {
  path: string;
  message: string;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatewayError';
    this.code = code;
    this.details = details;
  }
}

export class ValidationError extends GatewayError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super('VALIDATION_FAILED', message, details);
    this.name = 'ValidationError';
  }

  static field(path: string, message: string): ValidationError {
    return new ValidationError(`${path.replace(/^\//, '') || 'body'}: ${message}`, [{ path, message }]);
  }
}

export class RateLimitedError extends GatewayError {
  readonly retryAfterSeconds: number;

  constructor(code: 'RATE_LIMITED' | 'DAILY_CAP_REACHED' | 'SEND_CAP_REACHED' | 'SEND_QUEUE_FULL', message: string, retryAfterSeconds: number, details?: ErrorDetail[]) {
    super(code, message, details);
    this.name = 'RateLimitedError';
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/** How long a send WhatsApp refused as rate-limited (429) should wait: the network names no time; a minute is the gateway's guess. */
export const RATE_LIMITED_RETRY_SECONDS = 60;

/**
 * WhatsApp refused a message at once (it is stored, status `failed`): MESSAGE_RATE_LIMITED (429, Retry-After) for
 * `rate_limited`, MESSAGE_REFUSED (422) for any other reason. The details name the message, the reason and the code.
 */
export class MessageRefusedError extends GatewayError {
  readonly retryAfterSeconds?: number;

  constructor(messageId: string, failure: { reason: string; code?: string; detail?: string }) {
    const limited = failure.reason === 'rate_limited';
    super(
      limited ? 'MESSAGE_RATE_LIMITED' : 'MESSAGE_REFUSED',
      `WhatsApp refused message ${messageId}: ${failure.reason}${failure.code ? ` (error ${failure.code})` : ''}${failure.detail ? `: ${failure.detail}` : ''}`,
      [
        { path: '/messageId', message: messageId },
        { path: '/reason', message: failure.reason },
        ...(failure.code ? [{ path: '/code', message: failure.code }] : []),
      ],
    );
    this.name = 'MessageRefusedError';
    if (limited) this.retryAfterSeconds = RATE_LIMITED_RETRY_SECONDS;
  }
}

/** 503 with Retry-After: a capacity limit (requests in flight, large bodies, event streams) is reached for now. */
export class ServerBusyError extends GatewayError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds = 1) {
    super('SERVER_BUSY', message);
    this.name = 'ServerBusyError';
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

export class NetworkError extends GatewayError {
  constructor(message: string, cause?: unknown, code: 'NETWORK_ERROR' | 'MEDIA_EXPIRED' | 'S3_ERROR' | 'MEDIA_DOWNLOAD_FAILED' = 'NETWORK_ERROR') {
    super(code, message, undefined, { cause });
    this.name = 'NetworkError';
  }
}

export const notFound = (code: ErrorCode, what: string): GatewayError => new GatewayError(code, `${what} not found`);
