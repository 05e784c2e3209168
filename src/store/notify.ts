// NOTIFY on PostgreSQL (store.kind: postgres), as a write of the current transaction: listeners hear it once that
// transaction commits, and never if it rolls back.
import type { Db } from './db.js';

export function createNotifier(db: Db, channel: string): (payloads: readonly string[]) => void {
  const notify = db.prepare('SELECT pg_notify(?, ?)');
  return (payloads) => {
    for (const payload of payloads) notify.stage(channel, payload);
  };
}
