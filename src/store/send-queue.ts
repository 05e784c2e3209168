// Repository of the send governor's durable queue (migration 023): a session's sends waiting for their turn, and the
// first messages to people who never wrote, kept a day or two for the daily cap. An entry is written and committed before
// its caller is answered; it is removed (or, a first contact, marked sent) in the tick that stores the sent message.
import type { Db } from './db.js';

export interface QueuedSend {
  session: string;
  id: string;
  seq: number;
  messageId: string;
  chatId: string;
  /** the message's type (text, image, …) */
  type: string;
  firstContact: boolean;
  /** the async send's command id (its command.result names it); null for a held sync send */
  commandId: string | null;
  /** the validated send body, JSON */
  body: string;
  /** who queued it, JSON (src/messages/send-queue.ts) */
  caller: string;
  bytes: number;
  queuedAt: number;
}

/** An entry as GET …/queue lists it: no body. */
export type QueueEntry = Omit<QueuedSend, 'body' | 'caller'>;

interface RawEntry {
  session: string;
  id: string;
  queue_order: number | string;
  message_id: string;
  chat_id: string;
  type: string;
  first_contact: number;
  command_id: string | null;
  body: string;
  caller: string;
  bytes: number | string;
  queued_at: number | string;
}

const toEntry = (r: RawEntry): QueuedSend => ({
  session: r.session,
  id: r.id,
  seq: Number(r.queue_order),
  messageId: r.message_id,
  chatId: r.chat_id,
  type: r.type,
  firstContact: r.first_contact === 1,
  commandId: r.command_id,
  body: r.body,
  caller: r.caller,
  bytes: Number(r.bytes),
  queuedAt: Number(r.queued_at),
});

/** An entry waiting for its turn (`queued`) or claimed by the runner sending it (`sending`); `sent`: a counted first contact. */
const WAITING = `state IN ('queued', 'sending')`;
const NO_BODY = `session, id, queue_order, message_id, chat_id, type, first_contact, command_id, '' AS body, '' AS caller, bytes, queued_at`;

export type SendQueueRepo = ReturnType<typeof createSendQueueRepo>;

export function createSendQueueRepo(db: Db) {
  const insert = db.prepare(
    `INSERT INTO send_queue (session, id, queue_order, message_id, chat_id, type, state, first_contact, command_id, body, caller, bytes, queued_at)
     VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?)`,
  );
  const insertSentFirstContact = db.prepare(
    `INSERT INTO send_queue (session, id, queue_order, message_id, chat_id, type, state, first_contact, bytes, queued_at, sent_at) VALUES (?, ?, 0, ?, ?, ?, 'sent', 1, 0, ?, ?)`,
  );
  const head = db.prepare<RawEntry>(`SELECT * FROM send_queue WHERE session = ? AND state = 'queued' ORDER BY queue_order LIMIT 1`);
  const listing = db.prepare<RawEntry>(
    `SELECT ${NO_BODY} FROM send_queue WHERE session = ? AND ${WAITING} ORDER BY queue_order LIMIT ? OFFSET ?`,
  );
  const one = db.prepare<RawEntry & { state: string }>(`SELECT ${NO_BODY}, state FROM send_queue WHERE session = ? AND id = ? AND ${WAITING}`);
  const totals = db.prepare<{ n: number | string; bytes: number | string | null }>(`SELECT COUNT(*) AS n, SUM(bytes) AS bytes FROM send_queue WHERE session = ? AND ${WAITING}`);
  const ahead = db.prepare<{ n: number | string }>(`SELECT COUNT(*) AS n FROM send_queue WHERE session = ? AND ${WAITING} AND queue_order < ?`);
  const maxSeq = db.prepare<{ seq: number | string | null }>(`SELECT MAX(queue_order) AS seq FROM send_queue WHERE session = ?`);
  const sessionsWaiting = db.prepare<{ session: string }>(`SELECT DISTINCT session FROM send_queue WHERE ${WAITING}`);
  const remove = db.prepare(`DELETE FROM send_queue WHERE session = ? AND id = ? AND state = 'queued'`);
  const claim = db.prepare(`UPDATE send_queue SET state = 'sending' WHERE session = ? AND id = ? AND state = 'queued'`);
  const unclaim = db.prepare(`UPDATE send_queue SET state = 'queued' WHERE session = ? AND id = ? AND state = 'sending'`);
  const unclaimAll = db.prepare(`UPDATE send_queue SET state = 'queued' WHERE session = ? AND state = 'sending'`);
  const removeClaimed = db.prepare(`DELETE FROM send_queue WHERE session = ? AND id = ? AND state = 'sending'`);
  const markSent = db.prepare(`UPDATE send_queue SET state = 'sent', body = NULL, caller = NULL, sent_at = ? WHERE session = ? AND id = ?`);
  const firstContactsSince = db.prepare<{ chat_id: string }>(
    `SELECT DISTINCT chat_id FROM send_queue WHERE session = ? AND first_contact = 1 AND queued_at >= ?`,
  );
  const prune = db.prepare(`DELETE FROM send_queue WHERE state = 'sent' AND sent_at < ?`);

  return {
    /** Writes a queued entry (the caller awaits the store's commit before answering). */
    async add(entry: QueuedSend): Promise<void> {
      await insert.run(entry.session, entry.id, entry.seq, entry.messageId, entry.chatId, entry.type, entry.firstContact ? 1 : 0, entry.commandId, entry.body, entry.caller, entry.bytes, entry.queuedAt);
    },
    /** Records a first contact sent at once (staged into the tick of its message's row). */
    recordFirstContact(session: string, id: string, messageId: string, chatId: string, type: string, at: number): void {
      db.tick?.join();
      insertSentFirstContact.stage(session, id, messageId, chatId, type, at, at);
    },
    /** A waiting entry without its body, and whether a runner claimed it (it is being sent); undefined when there is none. */
    async entry(session: string, id: string): Promise<{ entry: QueueEntry; sending: boolean } | undefined> {
      const row = await one.get(session, id);
      return row && { entry: toEntry(row), sending: row.state === 'sending' };
    },
    async head(session: string): Promise<QueuedSend | undefined> {
      const row = await head.get(session);
      return row && toEntry(row);
    },
    async page(session: string, limit: number, offset: number): Promise<QueueEntry[]> {
      return (await listing.all(session, limit, offset)).map(toEntry);
    },
    async totals(session: string): Promise<{ entries: number; bytes: number }> {
      const row = await totals.get(session);
      return { entries: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0) };
    },
    /** entries of the session queued before `seq` */
    async ahead(session: string, seq: number): Promise<number> {
      return Number((await ahead.get(session, seq))?.n ?? 0);
    },
    async maxSeq(session: string): Promise<number> {
      return Number((await maxSeq.get(session))?.seq ?? 0);
    },
    async sessionsWithQueued(): Promise<string[]> {
      return (await sessionsWaiting.all()).map((r) => r.session);
    },
    /** Removes an entry still waiting (not claimed); false when it is not (or no longer) waiting. */
    async cancel(session: string, id: string): Promise<boolean> {
      return (await remove.run(session, id)).changes > 0;
    },
    /** A runner takes the entry to send it; false when it is gone (cancelled) or another runner claimed it. */
    async claim(session: string, id: string): Promise<boolean> {
      return (await claim.run(session, id)).changes > 0;
    },
    /** The claimed entry could not be sent now: it waits again, at its place. */
    async unclaim(session: string, id: string): Promise<void> {
      await unclaim.run(session, id);
    },
    /** The session's claims left by a runner that is gone (a crash, a failed store write): they wait again. */
    async unclaimAll(session: string): Promise<void> {
      await unclaimAll.run(session);
    },
    /** Removes a claimed entry that failed for good. */
    async dropClaimed(session: string, id: string): Promise<void> {
      await removeClaimed.run(session, id);
    },
    /** The claimed entry was sent: staged into the tick that stores its message (a first contact is kept for the daily cap). */
    completed(entry: Pick<QueuedSend, 'session' | 'id' | 'firstContact'>, at: number): void {
      db.tick?.join();
      if (entry.firstContact) markSent.stage(at, entry.session, entry.id);
      else removeClaimed.stage(entry.session, entry.id);
    },
    /** the people who never wrote that the session wrote to (or queued for) since `since` (ms) */
    async firstContactsSince(session: string, since: number): Promise<string[]> {
      return (await firstContactsSince.all(session, since)).map((r) => r.chat_id);
    },
    /** forgets first contacts sent before `before` (ms) */
    pruneSent: async (before: number): Promise<number> => (await prune.run(before)).changes,
  };
}
