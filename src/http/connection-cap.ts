// The per-address connection cap: one client address may hold at most `max` connections at once; one more is answered
// 503 SERVER_BUSY and closed as it is accepted, before any request on it is read. (server.maxConnections alone let
// one address with a thousand slow connections shut every other client out.) Exempt addresses (the host itself, a
// reverse proxy every client comes through) are not counted: one address there is everyone.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { errorStatus } from './error-status.js';

export function capConnectionsPerAddress(server: Server, max: number, exempt: readonly string[] = []): void {
  const open = new Map<string, number>();
  const unlimited = new Set(exempt);
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    if (unlimited.has(address)) return;
    const held = open.get(address) ?? 0;
    if (held >= max) return refuse(socket, max);
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

function refuse(socket: Socket, max: number): void {
  const body = JSON.stringify({ error: { code: 'SERVER_BUSY', message: `this address holds ${max} connections already (server.maxConnectionsPerAddress)` } });
  socket.on('error', () => undefined);
  socket.end(
    `HTTP/1.1 ${errorStatus.SERVER_BUSY} Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nX-Request-Id: ${randomUUID()}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
