// Message retention (messages.retentionDays): messages older than that are deleted with their media records and files
// (local blobs, S3 objects), oldest first, a batch at a time; the chat list and the search index follow. `keep` (the
// default) deletes nothing.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../logger.js';
import type { MediaService } from '../media/service.js';
import type { MessagesRepo } from '../store/messages.js';

const DAY_MS = 86_400_000;
/** messages deleted per transaction; a turn of the event loop between batches keeps requests answered meanwhile */
const BATCH = 1000;

export type RetentionDays = number | 'keep';

export interface PruneResult {
  messages: number;
  mediaFiles: number;
}

export class MessageRetention {
  private running: Promise<PruneResult> | undefined;

  constructor(
    private readonly deps: {
      messages: Pick<MessagesRepo, 'pruneOlderThan'>;
      media: Pick<MediaService, 'discard'>;
      retentionDays: RetentionDays;
      logger: Logger;
    },
  ) {}

  get enabled(): boolean {
    return this.deps.retentionDays !== 'keep';
  }

  /** One pass (a pass already under way is joined, not doubled). */
  prune(now = Date.now()): Promise<PruneResult> {
    if (this.deps.retentionDays === 'keep') return Promise.resolve({ messages: 0, mediaFiles: 0 });
    this.running ??= this.pass(now - this.deps.retentionDays * DAY_MS).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(cutoff: number): Promise<PruneResult> {
    const total: PruneResult = { messages: 0, mediaFiles: 0 };
    for (;;) {
      const batch = await this.deps.messages.pruneOlderThan(cutoff, BATCH);
      total.messages += batch.messages;
      // the rows are gone (committed) before their files: a crash in between leaves files no record points to, which
      // the start's reconcile removes (local), never a record pointing at a missing file
      if (batch.media.length) {
        const removed = await this.deps.media.discard(batch.media);
        total.mediaFiles += removed.blobs + removed.objects;
      }
      if (batch.messages < BATCH) break;
      await nextTurn();
    }
    if (total.messages) this.deps.logger.info({ ...total, retentionDays: this.deps.retentionDays }, 'pruned old messages');
    return total;
  }
}
