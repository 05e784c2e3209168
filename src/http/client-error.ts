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

/** Connections refused here and closing: Node's parser, still reading them, reports every later chunk as another error. */
const refused = new WeakSet<Duplex>();

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // destroying it at the next chunk of the body would reset the connection under the answer just written
  if (refused.has(socket) && err.code !== 'ECONNRESET') return;
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
    closeWhenQuiet(socket);
    listener(req, res);
  };
}

function writeError(socket: Duplex, code: ErrorCode, message: string): void {
  refused.add(socket);
  const status = errorStatus[code];
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
  closeWhenQuiet(socket);
}

/**
 * After an answer that ends the connection: the rest of the request (a body still arriving) is read and dropped, since
 * data arriving at a closed socket resets the connection and the client can lose the answer with it. The socket is
 * destroyed once the client has sent nothing for a second (a client that never reads must not hold it), or after 10 s.
 */
export function closeWhenQuiet(socket: Duplex): void {
  socket.resume();
  const net = socket as Socket;
  if (typeof net.setTimeout === 'function') net.setTimeout(1000, () => socket.destroy());
  else setTimeout(() => socket.destroy(), 1000).unref();
  setTimeout(() => socket.destroy(), 10_000).unref();
}
