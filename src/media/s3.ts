// Uploads media to an S3-compatible bucket (multipart through @aws-sdk/lib-storage) and builds public or presigned URLs.
// The AWS SDK (about 40 MB and 200 ms to import) loads when a bucket is first used, not when the daemon starts.
import type { S3Client } from '@aws-sdk/client-s3';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { S3Settings } from '../config/runtime-settings.js';
import { NetworkError } from '../errors.js';
import { checkTargetUrl, makeGuardedLookup } from '../net/url-guard.js';

export interface S3Connection {
  connectTimeoutMs: number;
  /** longest a request (and its answer) may take, and longest silence on its socket, ms */
  requestTimeoutMs: number;
  /** the endpoint may resolve to loopback/private addresses (a local MinIO); otherwise such a connection is refused */
  allowPrivateEndpoint: boolean;
}

export const DEFAULT_S3_CONNECTION: S3Connection = { connectTimeoutMs: 10_000, requestTimeoutMs: 60_000, allowPrivateEndpoint: false };

export interface UploadedObject {
  key: string;
  bucket: string;
  /** the object's lasting address: under publicBaseUrl, or the endpoint's own URL */
  objectUrl: string;
}

let clientSdk: Promise<typeof import('@aws-sdk/client-s3')> | undefined;
let storageSdk: Promise<typeof import('@aws-sdk/lib-storage')> | undefined;
let presignerSdk: Promise<typeof import('@aws-sdk/s3-request-presigner')> | undefined;
const s3Sdk = () => (clientSdk ??= import('@aws-sdk/client-s3'));
const uploadSdk = () => (storageSdk ??= import('@aws-sdk/lib-storage'));
const presigner = () => (presignerSdk ??= import('@aws-sdk/s3-request-presigner'));

export class S3Storage {
  private client: Promise<S3Client> | undefined;
  private readonly lookup: LookupFunction | undefined;

  constructor(
    readonly settings: S3Settings,
    private readonly connection: S3Connection = DEFAULT_S3_CONNECTION,
  ) {
    if (settings.endpoint && !connection.allowPrivateEndpoint) {
      // settings stored before the endpoint was checked, or a literal address (connections to those skip the lookup)
      try {
        checkTargetUrl(settings.endpoint, { allowPrivateTargets: false }, 'MEDIA_URL_REJECTED');
      } catch {
        throw new NetworkError('the configured S3 endpoint is not a public https URL; set media.s3AllowPrivateEndpoint for a local S3 server', undefined, 'S3_ERROR');
      }
    }
    this.lookup = connection.allowPrivateEndpoint ? undefined : makeGuardedLookup({ allowPrivateTargets: false });
  }

  private s3(): Promise<S3Client> {
    this.client ??= s3Sdk().then(({ S3Client }) => this.createClient(S3Client));
    return this.client;
  }

  private createClient(Client: typeof S3Client): S3Client {
    const { connection, settings, lookup } = this;
    return new Client({
      // without these a stalled endpoint holds an upload (and the received-message events queued behind auto-persist) forever
      requestHandler: {
        connectionTimeout: connection.connectTimeoutMs,
        requestTimeout: connection.requestTimeoutMs,
        throwOnRequestTimeout: true,
        socketTimeout: connection.requestTimeoutMs,
        httpAgent: new HttpAgent({ keepAlive: true, ...(lookup ? { lookup } : {}) }),
        httpsAgent: new HttpsAgent({ keepAlive: true, ...(lookup ? { lookup } : {}) }),
      },
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      maxAttempts: 2,
    });
  }

  async upload(key: string, body: Readable | Buffer, contentType: string, size: number | null): Promise<UploadedObject> {
    try {
      const [client, { Upload }] = await Promise.all([this.s3(), uploadSdk()]);
      const upload = new Upload({
        client,
        params: {
          Bucket: this.settings.bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
          ...(size !== null ? { ContentLength: size } : {}),
        },
        partSize: 8 * 1024 * 1024,
        queueSize: 2,
        leavePartsOnError: false,
      });
      await upload.done();
    } catch (err) {
      throw new NetworkError('the S3 storage failed the upload (the daemon log has the detail)', err, 'S3_ERROR');
    }
    return { key, bucket: this.settings.bucket, objectUrl: await this.objectUrl(key) };
  }

  /** The object's bytes as a stream; undefined when the bucket has no such key. */
  async read(key: string): Promise<{ stream: Readable; size: number | null } | undefined> {
    try {
      const [client, { GetObjectCommand }] = await Promise.all([this.s3(), s3Sdk()]);
      const object = await client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      return { stream: object.Body as Readable, size: object.ContentLength ?? null };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw new NetworkError('the S3 storage failed the read (the daemon log has the detail)', err, 'S3_ERROR');
    }
  }

  /** The object's size (null when S3 does not say); undefined when the bucket has no such key. */
  async head(key: string): Promise<number | null | undefined> {
    try {
      const [client, { HeadObjectCommand }] = await Promise.all([this.s3(), s3Sdk()]);
      const head = await client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      return head.ContentLength ?? null;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw new NetworkError('the S3 storage failed the read (the daemon log has the detail)', err, 'S3_ERROR');
    }
  }

  /** Deletes the object (a missing one is no error). */
  async remove(key: string): Promise<void> {
    try {
      const [client, { DeleteObjectCommand }] = await Promise.all([this.s3(), s3Sdk()]);
      await client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }));
    } catch (err) {
      if (isMissing(err)) return;
      throw new NetworkError('the S3 storage failed the delete (the daemon log has the detail)', err, 'S3_ERROR');
    }
  }

  /** A URL to read the object: public when publicBaseUrl is set, presigned otherwise. */
  async readUrl(key: string): Promise<string> {
    if (this.settings.publicBaseUrl) return `${this.settings.publicBaseUrl.replace(/\/+$/, '')}/${encodeKey(key)}`;
    const [client, { GetObjectCommand }, { getSignedUrl }] = await Promise.all([this.s3(), s3Sdk(), presigner()]);
    return getSignedUrl(client, new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }), {
      expiresIn: this.settings.presignExpiresSeconds,
    });
  }

  private async objectUrl(key: string): Promise<string> {
    if (this.settings.publicBaseUrl) return this.readUrl(key);
    const endpoint = await (await this.s3()).config.endpoint?.();
    if (endpoint) {
      const base = `${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path.replace(/\/$/, '')}`;
      return this.settings.forcePathStyle ? `${base}/${this.settings.bucket}/${encodeKey(key)}` : `${base.replace('//', `//${this.settings.bucket}.`)}/${encodeKey(key)}`;
    }
    return `https://${this.settings.bucket}.s3.${this.settings.region}.amazonaws.com/${encodeKey(key)}`;
  }

  destroy(): void {
    void this.client?.then(
      (client) => client.destroy(),
      () => {},
    );
  }
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

/** The S3 error's own words, for the log only: callers get a generic sentence (it may name buckets, hosts or accounts). */
export function s3Message(err: unknown): string {
  const e = err as { name?: string; message?: string; Code?: string };
  return [e.Code ?? e.name, e.message].filter(Boolean).join(': ') || String(err);
}
