// Repository of media records: what was received or sent, where its bytes are, and whether it was persisted to S3.
// The engine's reference (for a received file, the media key that decrypts it) is sealed at rest, bound to its row.
import type { SecretBox } from '../auth/secret-box.js';
import type { Db } from './db.js';
import { rowSealer } from './sealed-columns.js';

export interface MediaRow {
  id: string;
  session: string;
  messageId: string;
  chatId: string | null;
  mimeType: string;
  size: number | null;
  filename: string | null;
  /** file name of the local blob, when the bytes are held locally */
  blob: string | null;
  /** engine download reference (JSON), when the bytes stay on the network */
  ref: string | null;
  persisted: boolean;
  s3Key: string | null;
  s3Url: string | null;
  createdAt: string;
}

interface RawMedia {
  id: string;
  session: string;
  message_id: string;
  chat_id: string | null;
  mime_type: string;
  size: number | null;
  filename: string | null;
  blob: string | null;
  ref: string | null;
  persisted: number;
  s3_key: string | null;
  s3_url: string | null;
  created_at: string;
}

const toRowWith = (opened: (r: RawMedia) => string | null, r: RawMedia): MediaRow => ({
  id: r.id,
  session: r.session,
  messageId: r.message_id,
  chatId: r.chat_id,
  mimeType: r.mime_type,
  size: r.size,
  filename: r.filename,
  blob: r.blob,
  ref: opened(r),
  persisted: r.persisted === 1,
  s3Key: r.s3_key,
  s3Url: r.s3_url,
  createdAt: r.created_at,
});

export type MediaRepo = ReturnType<typeof createMediaRepo>;

export function createMediaRepo(db: Db, box: SecretBox) {
  const sealer = rowSealer(box, 'media', 'ref');
  const toRow = (r: RawMedia) => toRowWith((raw) => (raw.ref === null ? null : sealer.open(raw.ref, [raw.id])), r);
  const insert = db.prepare(
    `INSERT INTO media (id, session, message_id, chat_id, mime_type, size, filename, blob, ref, created_at)
     VALUES (@id, @session, @messageId, @chatId, @mimeType, @size, @filename, @blob, @ref, @createdAt)`,
  );
  const byId = db.prepare('SELECT * FROM media WHERE id = ?');
  const setPersisted = db.prepare('UPDATE media SET persisted = 1, s3_key = ?, s3_url = ? WHERE id = ?');
  const setBlob = db.prepare('UPDATE media SET blob = ? WHERE id = ?');
  const blobs = db.prepare('SELECT blob FROM media WHERE blob IS NOT NULL').pluck();
  const forgetBlob = db.prepare('UPDATE media SET blob = NULL WHERE id = ? AND blob = ?');

  return {
    /** staged into the open tick (the caller joined it): the record commits with the message that carries it */
    insert(row: Omit<MediaRow, 'persisted' | 's3Key' | 's3Url'>): void {
      insert.stage({ ...row, ref: row.ref === null ? null : sealer.seal(row.ref, [row.id]) });
    },
    async get(id: string): Promise<MediaRow | undefined> {
      const raw = (await byId.get(id)) as RawMedia | undefined;
      return raw && toRow(raw);
    },
    async markPersisted(id: string, key: string, url: string): Promise<void> {
      await setPersisted.run(key, url, id);
    },
    async setBlob(id: string, blob: string | null): Promise<void> {
      await setBlob.run(blob, id);
    },
    referencedBlobs: async (): Promise<Set<string>> => new Set((await blobs.all()) as string[]),
    /** the blob was evicted or lost: the record keeps its metadata but no longer points at local bytes */
    async clearBlob(id: string, blob: string): Promise<void> {
      await forgetBlob.run(id, blob);
    },
  };
}
