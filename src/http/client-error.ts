// Requests Node's HTTP parser refuses before the app sees them (malformed request line or headers, headers over
// Node's size limit, a request that took too long to arrive) get the same error envelope as every other answer,
// instead of Node's bare status line.
import { randomUUID } from 'node:crypto';
import { ServerResponse, STATUS_CODES, type IncomingMessage, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../errors.js';
import { errorStatus } from './error-status.js';

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
 * CONNECT (a proxy tunnel) is no method of this API; without a listener Node drops the connection with no answer. The
 * app answers it like any other request (its authority-form target 400, a path 405 with `Allow`), then the connection
 * closes: the socket left HTTP's parser when Node saw CONNECT, so it carries nothing after this answer.
 */
export function answerConnectWith(listener: RequestListener): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => {
      res.detachSocket(socket as Socket);
      socket.end();
    });
    // a client that never reads must not hold the socket open
    socket.once('finish', () => setTimeout(() => socket.destroy(), 1000).unref());
    // what the client sends after the head is discarded, so that closing does not reset the connection under the answer
    socket.resume();
    listener(req, res);
  };
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
  // the rest of the request (a body still arriving) is read and dropped: data left unread when the socket closes resets
  // the connection, and the client can lose the answer with it
  socket.resume();
  // a client that never reads must not hold the socket open
  setTimeout(() => socket.destroy(), 1000).unref();
}
