// A raw HTTP/1.1 client over one TCP socket: sends a request head and as much of the body as a test wants (a body
// that never finishes, headers sent halfway), and reads the answer or the server closing the connection.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
  /** parsed JSON body, when it is JSON */
  json?: any;
  header(name: string): string | undefined;
}

export interface RawExchange {
  socket: Socket;
  /** the first complete response on the connection; rejects when the connection closes without one */
  answer: Promise<RawAnswer>;
  /** resolves when the server (or anyone) closes the connection */
  closed: Promise<void>;
  write(chunk: string | Buffer): void;
}

/**
 * Opens a connection to `url` and writes `head` (request line and headers, without the blank line unless `end`);
 * from `options.localAddress` when given (any 127.x.y.z is loopback on Linux: another client address).
 */
export function rawExchange(
  url: string,
  head: string,
  bodyPart: string | Buffer = '',
  options: { answerHasNoBody?: boolean; localAddress?: string } = {},
): RawExchange {
  const { localAddress } = options;
  const { hostname, port } = new URL(url);
  const socket = connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) });
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  let settle!: { done: (a: RawAnswer) => void; fail: (e: Error) => void };
  const answer = new Promise<RawAnswer>((done, fail) => (settle = { done, fail }));
  answer.catch(() => undefined);
  const closed = new Promise<void>((done) => socket.once('close', () => done()));
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    const parsed = parse(buffer, false, options.answerHasNoBody);
    if (parsed) settle.done(parsed);
  });
  socket.once('close', () => {
    const parsed = parse(buffer, true, options.answerHasNoBody);
    if (parsed) settle.done(parsed);
    else settle.fail(new Error(`the connection closed without a complete answer (${buffer.length} bytes received)`));
  });
  socket.write(head);
  if (bodyPart.length) socket.write(bodyPart);
  return { socket, answer, closed, write: (chunk) => void socket.write(chunk) };
}

/** A request head: `POST /x HTTP/1.1`, Host, the given headers, and the blank line. */
export function requestHead(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join('\r\n') + '\r\n\r\n';
}

/** `noBody`: the answer to a HEAD, whose Content-Length is the length of the body a GET would get */
function parse(buffer: Buffer, atClose = false, noBody = false): RawAnswer | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buffer.subarray(0, end).toString('latin1');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const length = noBody ? 0 : headers.has('content-length') ? Number(headers.get('content-length')) : undefined;
  const rest = buffer.subarray(end + 4);
  if (length !== undefined && rest.length < length) return undefined;
  if (length === undefined && !atClose) return undefined;
  const body = rest.subarray(0, length ?? rest.length).toString('utf8');
  let json: unknown;
  try {
    json = body ? JSON.parse(body) : undefined;
  } catch {
    // not JSON
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, body, json, header: (name) => headers.get(name.toLowerCase()) };
}

/** Rejects when `promise` has not settled within `ms`: a deadline for "it never comes", not a measurement. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`no ${what} within ${ms} ms`)), ms))),
  ]);
}
