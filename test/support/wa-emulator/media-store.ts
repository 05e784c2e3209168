// The media host: an HTTPS blob store on loopback that takes Baileys' encrypted uploads and serves them back.
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { profile } from './profile.js';
import type { TlsIdentity } from './tls-cert.js';

export interface StoredBlob {
  path: string;
  bytes: Buffer;
  uploadedAt: number;
}

export class MediaStore {
  readonly blobs = new Map<string, StoredBlob>();
  private server: Server | undefined;

  constructor(private readonly tls: TlsIdentity) {}

  async start(port = 0): Promise<void> {
    const server = createServer({ key: this.tls.key, cert: this.tls.cert }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://media.invalid');
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          this.blobs.set(url.pathname, { path: url.pathname, bytes: Buffer.concat(chunks), uploadedAt: Date.now() });
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(profile.mediaUploadAnswer(this.host, url.pathname)));
        });
        return;
      }
      const blob = this.blobs.get(url.pathname);
      if (!blob || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      let body = blob.bytes;
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
        body = body.subarray(start, end + 1);
        res.statusCode = 206;
        res.setHeader('content-range', `bytes ${start}-${end}/${blob.bytes.length}`);
      }
      res.setHeader('content-length', body.length);
      res.end(req.method === 'HEAD' ? undefined : body);
    });
    server.keepAliveTimeout = 1_000;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
  }

  /** `127.0.0.1:port`, what media_conn advertises and uploads go to */
  get host(): string {
    if (!this.server) throw new Error('media store not started');
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
