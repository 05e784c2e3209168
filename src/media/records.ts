// Media records: every media message sent or received gets one; bytes held locally go to the blob store, whose size
// cap may evict them later: the record then loses its blob (and download answers MEDIA_EXPIRED unless S3 holds a copy).
import { randomUUID } from 'node:crypto';
import type { MediaAttachment } from '../engine/types.js';
import type { Logger } from '../logger.js';
import type { MediaRepo, MediaRow } from '../store/media.js';
import type { BlobStore } from './blob-store.js';
import { safeFileName } from './file-name.js';
import { extensionFor, safeMime } from './mime.js';

export interface MediaView {
  id: string;
  messageId: string;
  session: string;
  mimeType: string;
  size: number | null;
  filename?: string;
  persisted: boolean;
  s3Url?: string;
  createdAt: string;
}

export const mediaView = (row: MediaRow): MediaView => ({
  id: row.id,
  messageId: row.messageId,
  session: row.session,
  mimeType: row.mimeType,
  size: row.size,
  ...(row.filename ? { filename: row.filename } : {}),
  persisted: row.persisted,
  ...(row.s3Url ? { s3Url: row.s3Url } : {}),
  createdAt: row.createdAt,
});

export class MediaRecords {
  private constructor(
    readonly repo: MediaRepo,
    readonly blobs: BlobStore,
    logger: Logger,
  ) {
    // an eviction happens inside a write (the cap is enforced there): the record forgets its blob without holding it up;
    // a failure leaves the record pointing at a file that is gone, which a download answers as evicted anyway
    blobs.onEvict((name) => {
      repo.clearBlob(mediaIdOfBlob(name), name).catch((err: unknown) => logger.warn({ err, blob: name }, 'could not forget an evicted media blob'));
    });
  }

  /** The records over `blobs`, reconciled with them first. */
  static async open(repo: MediaRepo, blobs: BlobStore, logger: Logger): Promise<MediaRecords> {
    const records = new MediaRecords(repo, blobs, logger);
    await records.reconcile();
    return records;
  }

  /** At start: blobs no record points to are removed, records whose blob is gone forget it, then the cap is applied. */
  private async reconcile(): Promise<void> {
    const referenced = await this.repo.referencedBlobs();
    for (const name of this.blobs.names()) if (!referenced.has(name)) this.blobs.remove(name);
    const lost = [...referenced].filter((name) => !this.blobs.exists(name));
    await Promise.all(lost.map((name) => this.repo.clearBlob(mediaIdOfBlob(name), name)));
    this.blobs.enforceCap();
  }

  /**
   * Records an attachment of a message; bytes in hand are written to the blob store before the record exists. The record
   * is staged into the open tick: the caller joined it (the message that carries the attachment is written in it too).
   */
  record(session: string, messageId: string, chatId: string, attachment: MediaAttachment): MediaRow {
    const id = randomUUID();
    let blob: string | null = null;
    if (attachment.data) {
      blob = blobName(id, safeMime(attachment.mimeType));
      this.blobs.writeSync(blob, attachment.data);
    } else if (attachment.file) {
      blob = blobName(id, safeMime(attachment.mimeType));
      if (!this.blobs.adoptSync(blob, attachment.file, attachment.size ?? 0)) blob = null;
    }
    const row = {
      id,
      session,
      messageId,
      chatId,
      mimeType: safeMime(attachment.mimeType),
      size: attachment.size ?? attachment.data?.length ?? null,
      filename: safeFileName(attachment.filename) ?? null,
      blob,
      ref: attachment.ref === undefined ? null : JSON.stringify(attachment.ref),
      createdAt: new Date().toISOString(),
    };
    this.repo.insert(row);
    return { ...row, persisted: false, s3Key: null, s3Url: null };
  }
}

/** A blob is named `<mediaId>.<ext>`, so an evicted blob leads back to its record by primary key. */
const blobName = (mediaId: string, mimeType: string): string => `${mediaId}.${extensionFor(mimeType)}`;
const mediaIdOfBlob = (name: string): string => name.split('.')[0]!;
