// Repository of what happened to messages after they were stored (migration 020): acks with their times and who gave
// them, failures (kind `failed`, actor the reason, value `{code?, detail?}` as JSON), reactions and poll votes (the
// newest per person), and every edit. Written into the tick of the event that
// reports it; read a page of messages at a time.
import type { Db } from './db.js';
import { inListQuery } from './in-list.js';

export type ActivityKind = 'sent' | 'delivered' | 'read' | 'failed' | 'reaction' | 'vote' | 'edit';

export interface ActivityRow {
  chatId: string;
  messageId: string;
  kind: ActivityKind;
  /** a JID, '' where nobody is named; an edit's is its time; a failure's is its reason */
  actor: string;
  value: string | null;
  at: number;
}

interface RawActivity {
  chat_id: string;
  message_id: string;
  kind: ActivityKind;
  actor: string;
  value: string | null;
  at: number;
}

export type MessageActivityRepo = ReturnType<typeof createMessageActivityRepo>;

/** the most message ids one query asks about */
export const ACTIVITY_READ_MAX = 256;

export function createMessageActivityRepo(db: Db) {
  // an ack keeps the first time it was reached; a reaction or vote is replaced by a newer one (an older one, arriving
  // late, is not)
  const record = db.prepare(
    `INSERT INTO message_activity (session, chat_id, message_id, kind, actor, value, at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session, chat_id, message_id, kind, actor) DO UPDATE SET value = excluded.value, at = excluded.at
     WHERE message_activity.kind IN ('reaction', 'vote') AND excluded.at >= message_activity.at`,
  );
  const ofMessages = inListQuery<RawActivity>(
    db,
    (ids) => `SELECT chat_id, message_id, kind, actor, value, at FROM message_activity WHERE session = ? AND chat_id = ? AND message_id IN (${ids}) ORDER BY at, kind, actor`,
  );

  return {
    /** staged into the tick (joined here), with the event that reports it */
    record(session: string, entry: ActivityRow): void {
      db.tick?.join();
      record.stage(session, entry.chatId, entry.messageId, entry.kind, entry.actor, entry.value, entry.at);
    },
    /** every row of these messages of a chat, oldest first within each ACTIVITY_READ_MAX ids asked (one query each) */
    async of(session: string, chatId: string, ids: readonly string[]): Promise<ActivityRow[]> {
      const unique = [...new Set(ids)];
      const found: ActivityRow[] = [];
      for (let start = 0; start < unique.length; start += ACTIVITY_READ_MAX) {
        for (const r of await ofMessages([session, chatId], unique.slice(start, start + ACTIVITY_READ_MAX))) {
          found.push({ chatId: r.chat_id, messageId: r.message_id, kind: r.kind, actor: r.actor, value: r.value, at: Number(r.at) });
        }
      }
      return found;
    },
  };
}
