// A typed handle on the `ws` package (installed with Baileys; the project has no @types/ws), in noServer mode.
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';

export interface WsSocket {
  readonly readyState: number;
  send(data: Uint8Array, callback?: (error?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[]) => void): this;
  on(event: 'close', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
}

export interface WsServer {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: WsSocket) => void): void;
  close(callback?: () => void): void;
}

interface WsModule {
  WebSocketServer: new (options: { noServer: true; perMessageDeflate: false }) => WsServer;
}

export const WS_OPEN = 1;

export function createWsServer(): WsServer {
  const { WebSocketServer } = createRequire(import.meta.url)('ws') as WsModule;
  return new WebSocketServer({ noServer: true, perMessageDeflate: false });
}

export const toBuffer = (data: Buffer | ArrayBuffer | Buffer[]): Buffer =>
  Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
