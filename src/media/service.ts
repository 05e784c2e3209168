// Media operations: records, download streams, persist to S3, and auto-persist of incoming media before its event goes out.
import type { Readable } from 'node:stream';
import { GatewayError, NetworkError, notFound } from '../errors.js';
import type { RuntimeSettingsStore, S3Settings } from '../config/runtime-settings.js';
import type { Logger } from '../logger.js';
import type { EngineEventProcessor, SessionManager } from '../sessions/manager.js';
import type { MediaRow } from '../store/media.js';
import { safeFileName } from './file-name.js';
import { extensionFor, safeMime } from './mime.js';
import type { MediaRecords } from './records.js';
import { DEFAULT_S3_CONNECTION, S3Storage, s3Message, type S3Connection } from './s3.js';

export interface PersistResult {
  url: string;
  key: string;
  bucket: string;
  size: number | null;
  mimeType: string;
}

export interface MediaContent {
  stream: Readable;
  mimeType: string;
  size: number | null;
  filename: string;
}

const AUTO_PERSIST_ATTEMPTS = 3;

export interface StorageCheck {
  configured: boolean;
  /** null when no storage is configured */
  reachable: boolean | null;
  /** why not, in general words (S3's own error is in the daemon log) */
  error?: string;
}

export class MediaService {
  private storage: S3Storage | undefined;

  constructor(
    private readonly deps: {
      records: MediaRecords;
      sessions: SessionManager;
      settings: RuntimeSettingsStore;
      logger: Logger;
      /** pause between auto-persist attempts, ms */
      retryDelayMs?: number;
      /** timeouts and endpoint policy of the S3 client */
      s3Connection?: S3Connection;
      /** all attempts of one auto-persist end within this, ms */
      autoPersistTimeoutMs?: number;
    },
  ) {
    deps.settings.onChange(() => this.resetStorage());
  }

  async get(session: string, id: string): Promise<MediaRow> {
    await this.deps.sessions.get(session);
    const row = await this.deps.records.repo.get(id);
    if (!row || row.session !== session) throw notFound('MEDIA_NOT_FOUND', `media ${id}`);
    return row;
  }

  /**
   * The decrypted bytes as a stream: from the local blob; else from the network through the engine; else, when the
   * file was persisted, from the configured S3 bucket (the local copy evicted, the network's copy expired, or the
   * session not connected). Nothing left → MEDIA_EXPIRED, or the network's own error.
   */
  async open(session: string, id: string): Promise<MediaContent> {
    try {
      return await this.openRow(session, await this.get(session, id));
    } catch (err) {
      throw this.logged(err, session, id);
    }
  }

  private async openRow(session: string, row: MediaRow): Promise<MediaContent> {
    const id = row.id;
    // rows stored before file names were made safe may still hold control characters
    const filename = safeFileName(row.filename) ?? `${row.id}.${extensionFor(row.mimeType)}`;
    const local = row.blob ? this.deps.records.blobs.open(row.blob) : undefined;
    if (local) return { stream: local.stream, mimeType: row.mimeType, size: local.size, filename };
    if (row.ref) {
      try {
        return await this.fromNetwork(session, row, filename);
      } catch (err) {
        const persisted = await this.fromBucket(row, filename).catch(() => undefined);
        if (persisted) return persisted;
        throw err;
      }
    }
    const persisted = await this.fromBucket(row, filename);
    if (persisted) return persisted;
    throw new GatewayError(
      'MEDIA_EXPIRED',
      `the bytes of media ${id} are no longer available: the local copy was evicted from the media cache (media.localCacheMaxBytes) and the network holds no copy` +
        (row.s3Url ? `; it was persisted to ${row.s3Url}, which the configured S3 storage could not serve` : ''),
    );
  }

  private async fromNetwork(session: string, row: MediaRow, filename: string): Promise<MediaContent> {
    const engine = await this.deps.sessions.connected(session);
    if (!engine.downloadMedia) throw new GatewayError('NOT_SUPPORTED', 'this engine cannot download media');
    try {
      const stream = (await engine.downloadMedia(JSON.parse(row.ref!))) as Readable;
      return { stream, mimeType: row.mimeType, size: row.size, filename };
    } catch (err) {
      // the engine's CDN fetch failing is an upstream failure (502), not a bad request
      if (err instanceof GatewayError && err.code === 'MEDIA_DOWNLOAD_FAILED') throw new NetworkError(err.message, err, 'NETWORK_ERROR');
      throw err;
    }
  }

  /** The persisted object, when the record was persisted and the configured bucket still has it. */
  private async fromBucket(row: MediaRow, filename: string): Promise<MediaContent | undefined> {
    if (!row.persisted || !row.s3Key) return undefined;
    const object = await this.currentStorage()?.read(row.s3Key);
    return object && { stream: object.stream, mimeType: row.mimeType, size: object.size ?? row.size, filename };
  }

  async persist(session: string, id: string): Promise<PersistResult> {
    const row = await this.get(session, id);
    const storage = this.requireStorage();
    try {
      return await this.persistRow(session, row, storage);
    } catch (err) {
      throw this.logged(err, session, id);
    }
  }

  /** S3's own error text goes to the log, never to the caller (the error they get says so). */
  private logged(err: unknown, session: string, mediaId: string): unknown {
    if (err instanceof GatewayError && err.code === 'S3_ERROR') this.deps.logger.warn({ session, mediaId, detail: s3Message(err.cause) }, err.message);
    return err;
  }

  private async persistRow(session: string, row: MediaRow, storage: S3Storage): Promise<PersistResult> {
    if (row.persisted && row.s3Key) {
      // already in the bucket: answer with it rather than upload it again (each call would cost a download and an upload)
      const size = await storage.head(row.s3Key);
      if (size !== undefined) {
        return { url: await storage.readUrl(row.s3Key), key: row.s3Key, bucket: storage.settings.bucket, size: size ?? row.size, mimeType: row.mimeType };
      }
    }
    const key = objectKey(storage.settings, row);
    const content = await this.openRow(session, row);
    const uploaded = await storage.upload(key, content.stream, safeMime(row.mimeType), content.size);
    await this.deps.records.repo.markPersisted(row.id, key, uploaded.objectUrl);
    return { url: await storage.readUrl(key), key, bucket: uploaded.bucket, size: content.size, mimeType: row.mimeType };
  }

  /** With auto-persist on, uploads each received media file before message.received is published, so it carries mediaUrl. */
  autoPersist(): EngineEventProcessor {
    return (session, type, payload) => {
      const mediaId = payload.mediaId;
      if (type !== 'message.received' || typeof mediaId !== 'string') return;
      const { autoPersist, s3 } = this.deps.settings.get();
      if (!autoPersist || !s3) return;
      return this.persistWithin(session, mediaId).then((url) => {
        if (url) payload.mediaUrl = url;
      });
    };
  }

  /**
   * The session's later events wait for this one, so a stalled storage must not hold them: past the deadline the event
   * goes out without mediaUrl (the upload may still finish in the background and mark the record persisted).
   */
  private async persistWithin(session: string, mediaId: string): Promise<string | undefined> {
    const ms = this.deps.autoPersistTimeoutMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<undefined>((done) => {
      timer = setTimeout(() => {
        this.deps.logger.warn({ session, mediaId, timeoutMs: ms }, 'auto-persist did not finish in time; the message goes out without mediaUrl');
        done(undefined);
      }, ms);
    });
    try {
      return await Promise.race([this.persistWithRetries(session, mediaId), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async persistWithRetries(session: string, mediaId: string): Promise<string | undefined> {
    for (let attempt = 1; attempt <= AUTO_PERSIST_ATTEMPTS; attempt += 1) {
      try {
        return (await this.persist(session, mediaId)).url;
      } catch (err) {
        this.deps.logger.warn({ err, session, mediaId, attempt }, 'auto-persist failed');
        if (attempt < AUTO_PERSIST_ATTEMPTS) await new Promise((r) => setTimeout(r, (this.deps.retryDelayMs ?? 500) * 2 ** (attempt - 1)));
      }
    }
    this.deps.logger.error({ session, mediaId }, 'auto-persist gave up; the message goes out without mediaUrl');
    return undefined;
  }

  /**
   * The files of media records that were deleted (message retention): local blobs, and S3 objects while a storage is
   * configured. A file that cannot be removed is logged, not retried: a local blob no record points to is removed at the
   * next start anyway; an S3 object stays in the bucket (its lifecycle rules can expire it).
   */
  async discard(media: ReadonlyArray<{ id: string; blob: string | null; s3Key: string | null }>): Promise<{ blobs: number; objects: number }> {
    let blobs = 0;
    let objects = 0;
    for (const record of media) {
      if (record.blob) {
        this.deps.records.blobs.remove(record.blob);
        blobs += 1;
      }
      if (!record.s3Key) continue;
      const storage = this.currentStorage();
      if (!storage) {
        this.deps.logger.warn({ mediaId: record.id, key: record.s3Key }, 'a pruned media file stays in S3: no storage is configured any more');
        continue;
      }
      try {
        await storage.remove(record.s3Key);
        objects += 1;
      } catch (err) {
        this.deps.logger.warn({ mediaId: record.id, key: record.s3Key, detail: s3Message((err as { cause?: unknown }).cause ?? err) }, 'could not delete a pruned media file from S3');
      }
    }
    return { blobs, objects };
  }

  /** Whether the configured S3 storage answers (a HEAD of an object that need not exist); S3's own error goes to the log. */
  async checkStorage(timeoutMs = 10_000): Promise<StorageCheck> {
    const storage = this.currentStorage();
    if (!storage) return { configured: false, reachable: null };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const prefix = storage.settings.keyPrefix.replace(/^\/+|\/+$/g, '');
      await Promise.race([storage.head([prefix, '.gateway-reachability-check'].filter(Boolean).join('/')), timeout]);
      return { configured: true, reachable: true };
    } catch (err) {
      this.deps.logger.warn({ err: s3Message((err as { cause?: unknown }).cause ?? err) }, 'the S3 storage did not answer the reachability check');
      return { configured: true, reachable: false, error: (err as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  private requireStorage(): S3Storage {
    const storage = this.currentStorage();
    if (!storage) throw new GatewayError('S3_NOT_CONFIGURED', 'no S3 storage is configured; set it with PUT /api/admin/settings or `gateway settings s3`');
    return storage;
  }

  private currentStorage(): S3Storage | undefined {
    const s3 = this.deps.settings.get().s3;
    if (!s3) return undefined;
    this.storage ??= new S3Storage(s3, this.deps.s3Connection ?? DEFAULT_S3_CONNECTION);
    return this.storage;
  }

  private resetStorage(): void {
    this.storage?.destroy();
    this.storage = undefined;
  }

  close(): void {
    this.resetStorage();
  }
}

/** `<prefix>/<session>/<yyyy>/<mm>/<mediaId>.<ext>` (no prefix segment when the prefix is empty). */
export function objectKey(settings: Pick<S3Settings, 'keyPrefix'>, row: Pick<MediaRow, 'id' | 'session' | 'mimeType' | 'createdAt'>): string {
  const at = new Date(row.createdAt);
  const parts = [
    settings.keyPrefix.replace(/^\/+|\/+$/g, ''),
    row.session,
    String(at.getUTCFullYear()),
    String(at.getUTCMonth() + 1).padStart(2, '0'),
    `${row.id}.${extensionFor(row.mimeType)}`,
  ];
  return parts.filter(Boolean).join('/');
}
