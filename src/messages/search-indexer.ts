// Indexes stored messages for search a batch at a time (SQLite; PostgreSQL indexes as it stores): a message can be found
// within about a second of being stored, and the work stays off the path that stores it.
import type { Logger } from '../logger.js';
import type { MessagesRepo } from '../store/messages.js';

/** messages indexed in one transaction: a few ms of the event loop */
const BATCH = 1000;
const EVERY_MS = 500;

export function startSearchIndexer(messages: Pick<MessagesRepo, 'indexSearch'>, logger: Logger): { stop(): void } {
  let running = false;
  const pass = async () => {
    if (running) return;
    running = true;
    try {
      while ((await messages.indexSearch(BATCH)) >= BATCH) await new Promise((next) => setImmediate(next));
    } catch (err) {
      logger.warn({ err }, 'could not index messages for search; trying again');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void pass(), EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
