// Local media blobs in the data directory: written once, streamed on download, evicted oldest-first past a size cap.
import { createReadStream, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export class BlobStore {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  async write(name: string, data: Buffer): Promise<void> {
    await writeFile(join(this.dir, name), data, { mode: 0o600 });
  }

  /** Synchronous write: used while an event is being recorded, so the blob exists before its record. */
  writeSync(name: string, data: Buffer): void {
    writeFileSync(join(this.dir, name), data, { mode: 0o600 });
  }

  exists(name: string): boolean {
    try {
      return statSync(join(this.dir, name)).isFile();
    } catch {
      return false;
    }
  }

  size(name: string): number {
    return statSync(join(this.dir, name)).size;
  }

  read(name: string): Readable {
    return createReadStream(join(this.dir, name));
  }

  remove(name: string): void {
    try {
      unlinkSync(join(this.dir, name));
    } catch {
      // already gone
    }
  }

  /** Removes the oldest blobs until the total is under capBytes; returns the names removed. */
  evict(capBytes: number): string[] {
    const files = readdirSync(this.dir).map((name) => {
      const stat = statSync(join(this.dir, name));
      return { name, size: stat.size, mtime: stat.mtimeMs };
    });
    let total = files.reduce((sum, f) => sum + f.size, 0);
    const removed: string[] = [];
    for (const file of files.sort((a, b) => a.mtime - b.mtime)) {
      if (total <= capBytes) break;
      this.remove(file.name);
      total -= file.size;
      removed.push(file.name);
    }
    return removed;
  }
}
