// The media host: an HTTPS blob store on loopback that takes Baileys' encrypted uploads and serves them back.
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { getMediaKeys } from '@whiskeysockets/baileys';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { profile } from './profile.js';
import type { TlsIdentity } from './tls-cert.js';

export interface UploadedMedia {
  url: string;
  directPath: string;
  mediaKey: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

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

  /**
   * A file a phone uploads (as WhatsApp clients encrypt media): AES-256-CBC with the keys Baileys derives from a random
   * media key, then the first 10 bytes of HMAC-SHA256(iv ‖ ciphertext). Returns the fields a media message carries.
   */
  async upload(bytes: Buffer, mediaType: 'image' | 'video' | 'audio' | 'document' | 'sticker'): Promise<UploadedMedia> {
    const mediaKey = randomBytes(32);
    const { cipherKey, iv, macKey } = await getMediaKeys(mediaKey, mediaType);
    const cipher = createCipheriv('aes-256-cbc', cipherKey!, iv!);
    const encrypted = Buffer.concat([cipher.update(bytes), cipher.final()]);
    const mac = createHmac('sha256', macKey!).update(iv!).update(encrypted).digest().subarray(0, 10);
    const body = Buffer.concat([encrypted, mac]);
    const path = `/mms/${mediaType}/${randomBytes(16).toString('hex')}.enc`;
    this.blobs.set(path, { path, bytes: body, uploadedAt: Date.now() });
    return {
      url: `https://${this.host}${path}`,
      directPath: path,
      mediaKey,
      fileSha256: createHash('sha256').update(bytes).digest(),
      fileEncSha256: createHash('sha256').update(body).digest(),
      fileLength: bytes.length,
    };
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
