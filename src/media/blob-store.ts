// Local media blobs in the data directory: written once, streamed on download, and held under a size cap by
// evicting the least recently used blobs (written or read) after each write.
import { randomUUID } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, linkSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { StagedFile } from '../engine/types.js';

const STAGED_SUFFIX = '.part';

/** A download still being written into the store's folder (not a blob until a record adopts it). */
export const isStagedFile = (name: string): boolean => name.endsWith(STAGED_SUFFIX);

export interface BlobStoreOptions {
  /** total bytes the store may hold; past it, the least recently used blobs are removed (never the one just written) */
  maxBytes?: number;
}

export interface OpenBlob {
  stream: Readable;
  size: number;
}

export class BlobStore {
  readonly maxBytes: number;
  /** name → size, least recently used first (a Map keeps insertion order; a use re-inserts) */
  private readonly blobs = new Map<string, number>();
  private total = 0;
  private readonly evictListeners: Array<(name: string) => void> = [];
  /** the blob each buffer (or staged file) was last written to: the same bytes recorded again become a hard link to it */
  private readonly writtenFrom = new WeakMap<Buffer | StagedFile, string>();

  constructor(
    private readonly dir: string,
    options: BlobStoreOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const found = readdirSync(dir).flatMap((name) => {
      try {
        const stat = statSync(join(dir, name));
        return stat.isFile() ? [{ name, size: stat.size, mtime: stat.mtimeMs }] : [];
      } catch {
        return [];
      }
    });
    for (const file of found.sort((a, b) => a.mtime - b.mtime)) this.track(file.name, file.size);
  }

  /** Called with the name of each blob the cap evicts, after its file is gone. */
  onEvict(listener: (name: string) => void): void {
    this.evictListeners.push(listener);
  }

  /**
   * Synchronous write: used while an event is being recorded, so the blob exists before its record. Enforces the cap.
   * The same buffer written again (a sandbox message's recipient in this daemon records the bytes its sender just did)
   * is linked to the first blob instead: a second copy of a 70 MB file cost as long as the rest of its send. (Each name
   * still counts its size toward the cap, so the cap errs on the side of evicting early.)
   */
  writeSync(name: string, data: Buffer): void {
    if (!this.linkedToEarlier(name, data)) writeFileSync(join(this.dir, name), data, { mode: 0o600 });
    this.writtenFrom.set(data, name);
    this.track(name, data.length);
    this.enforceCap(name);
  }

  /**
   * A file for a download that may become a blob: untracked until a record adopts it, removed by `discard` if none does
   * (and, after a crash, by the start's reconcile, which removes every file no record points to).
   */
  stage(): StagedFile {
    return { path: join(this.dir, `${randomUUID()}${STAGED_SUFFIX}`) };
  }

  /**
   * Makes a staged file the blob `name`: the first record moves it into place, later ones (a sandbox recipient in this
   * daemon) link to that blob. Enforces the cap. False when the file is gone (discarded, or its blob evicted meanwhile).
   */
  adoptSync(name: string, staged: StagedFile, size: number): boolean {
    if (!this.linkedToEarlier(name, staged)) {
      try {
        renameSync(staged.path, join(this.dir, name));
      } catch {
        return false;
      }
    }
    this.writtenFrom.set(staged, name);
    this.track(name, size);
    this.enforceCap(name);
    return true;
  }

  /** Removes a staged file no record adopted (a send that failed after its download). */
  discard(staged: StagedFile): void {
    if (this.writtenFrom.has(staged)) return;
    try {
      unlinkSync(staged.path);
    } catch {
      // never written, or already gone
    }
  }

  private linkedToEarlier(name: string, data: Buffer | StagedFile): boolean {
    const earlier = this.writtenFrom.get(data);
    if (earlier === undefined || !this.blobs.has(earlier)) return false;
    try {
      linkSync(join(this.dir, earlier), join(this.dir, name));
      return true;
    } catch {
      return false;
    }
  }

  exists(name: string): boolean {
    return this.blobs.has(name);
  }

  /** Opens a blob for reading and marks it used; undefined when it is gone (evicted or never written). */
  open(name: string): OpenBlob | undefined {
    if (!this.blobs.has(name)) return undefined;
    let fd: number;
    try {
      fd = openSync(join(this.dir, name), 'r');
    } catch {
      this.untrack(name);
      return undefined;
    }
    let size: number;
    try {
      size = fstatSync(fd).size;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.touch(name);
    // the open descriptor keeps the bytes readable even if the blob is evicted while it streams
    return { stream: createReadStream('', { fd, autoClose: true }), size };
  }

  remove(name: string): void {
    try {
      unlinkSync(join(this.dir, name));
    } catch {
      // already gone
    }
    this.untrack(name);
  }

  /** Names of the blobs held, least recently used first. */
  names(): string[] {
    return [...this.blobs.keys()];
  }

  /** Removes the least recently used blobs (except `keep`) until the total is within the cap; returns the names removed. */
  enforceCap(keep?: string): string[] {
    const removed: string[] = [];
    if (this.total <= this.maxBytes) return removed;
    for (const name of [...this.blobs.keys()]) {
      if (this.total <= this.maxBytes) break;
      if (name === keep) continue;
      this.remove(name);
      removed.push(name);
      for (const listener of this.evictListeners) listener(name);
    }
    return removed;
  }

  private track(name: string, size: number): void {
    this.untrack(name);
    this.blobs.set(name, size);
    this.total += size;
  }

  private untrack(name: string): void {
    const size = this.blobs.get(name);
    if (size === undefined) return;
    this.blobs.delete(name);
    this.total -= size;
  }

  /** Moves a blob to the most recently used end; its mtime follows so the order survives a restart. */
  private touch(name: string): void {
    const size = this.blobs.get(name)!;
    this.blobs.delete(name);
    this.blobs.set(name, size);
    try {
      const now = new Date();
      utimesSync(join(this.dir, name), now, now);
    } catch {
      // the order in memory is what counts while running
    }
  }
}
