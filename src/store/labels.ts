// Repository of business labels per session and the chats each label is assigned to.
import type { Db } from './db.js';

export interface LabelRow {
  id: string;
  name: string;
  color: number;
}

export type LabelsRepo = ReturnType<typeof createLabelsRepo>;

export function createLabelsRepo(db: Db) {
  // numeric ids in numeric order; SQLite's CAST reads a non-number as 0, PostgreSQL's would fail, so it is guarded there
  const [numericId, numericOnly] = db.dialect === 'postgres'
    ? ["CASE WHEN id ~ '^[0-9]+$' THEN id::numeric ELSE 0 END", "id ~ '^[0-9]+$'"]
    : ['CAST(id AS INTEGER)', "id GLOB '[0-9]*'"];
  const all = db.prepare(`SELECT id, name, color FROM labels WHERE session = ? ORDER BY ${numericId}, id`);
  const page = db.prepare(`SELECT id, name, color FROM labels WHERE session = ? ORDER BY ${numericId}, id LIMIT ? OFFSET ?`);
  const count = db.prepare('SELECT COUNT(*) FROM labels WHERE session = ?').pluck();
  const byId = db.prepare('SELECT id, name, color FROM labels WHERE session = ? AND id = ?');
  const put = db.prepare(
    `INSERT INTO labels (session, id, name, color) VALUES (@session, @id, @name, @color)
     ON CONFLICT (session, id) DO UPDATE SET name = excluded.name, color = excluded.color`,
  );
  const remove = db.prepare('DELETE FROM labels WHERE session = ? AND id = ?');
  const assign = db.prepare('INSERT INTO label_chats (session, label_id, chat_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
  const unassign = db.prepare('DELETE FROM label_chats WHERE session = ? AND label_id = ? AND chat_id = ?');
  const chats = db.prepare('SELECT chat_id FROM label_chats WHERE session = ? AND label_id = ? ORDER BY chat_id').pluck();
  const clear = db.prepare('DELETE FROM labels WHERE session = ?');
  const maxId = db.prepare(`SELECT MAX(${numericId}) FROM labels WHERE session = ? AND ${numericOnly}`).pluck();

  return {
    async list(session: string, limit?: number, offset = 0): Promise<LabelRow[]> {
      return (await (limit === undefined ? all.all(session) : page.all(session, limit, offset))) as LabelRow[];
    },
    count: async (session: string): Promise<number> => (await count.get(session)) as number,
    get: (session: string, id: string): Promise<LabelRow | undefined> => byId.get(session, id) as Promise<LabelRow | undefined>,
    /** staged into the tick (joined here) */
    put(session: string, label: LabelRow): void {
      db.tick?.join();
      put.stage({ session, ...label });
    },
    /** removes the label and its chat assignments */
    remove: async (session: string, id: string): Promise<boolean> => (await remove.run(session, id)).changes > 0,
    /** false when the label is unknown here */
    async assign(session: string, id: string, chatId: string): Promise<boolean> {
      if (!(await byId.get(session, id))) return false;
      await assign.run(session, id, chatId);
      return true;
    },
    unassign: async (session: string, id: string, chatId: string): Promise<boolean> => (await unassign.run(session, id, chatId)).changes > 0,
    chats: async (session: string, id: string): Promise<string[]> => (await chats.all(session, id)) as string[],
    /** the next free numeric id (labels are numbered by the client) */
    nextId: async (session: string): Promise<string> => String((((await maxId.get(session)) as number | null) ?? 0) + 1),
    /** every label of the session, with its assignments */
    async clear(session: string): Promise<void> {
      await clear.run(session);
    },
  };
}
