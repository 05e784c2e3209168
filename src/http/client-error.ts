// Requests Node's HTTP parser refuses before the app sees them (malformed request line or headers, headers over
// Node's size limit, a request that took too long to arrive) get the same error envelope as every other answer,
// instead of Node's bare status line.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../errors.js';
import { errorStatus } from './error-status.js';
import { isOriginForm, nonOriginFormError } from './middleware/request-target.js';

const ANSWERS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'HEADERS_TOO_LARGE', message: 'the request line and headers are larger than the server accepts' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' },
};
const MALFORMED = { code: 'MALFORMED_REQUEST', message: 'the request is not valid HTTP/1.1' } as const;

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // a response already under way on this connection (keep-alive, pipelining) must not get a second status line in it
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const { code, message } = ANSWERS[err.code ?? ''] ?? MALFORMED;
  writeError(socket, code, message);
}

/**
 * CONNECT (a proxy tunnel) is no method of this API, for any path: 501; its usual authority-form target (`host:port`) is
 * no request target of this API either: 400. Without this Node drops the connection with no answer.
 */
export function answerConnect(req: { url?: string }, socket: Duplex): void {
  if (!isOriginForm(req.url)) writeError(socket, 'MALFORMED_REQUEST', nonOriginFormError().message);
  else writeError(socket, 'NOT_SUPPORTED', 'CONNECT is not supported');
}

function writeError(socket: Duplex, code: ErrorCode, message: string): void {
  const status = errorStatus[code];
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
  // a client that never reads must not hold the socket open
  setTimeout(() => socket.destroy(), 1000).unref();
}
