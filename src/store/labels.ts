// Repository of business labels per session and the chats each label is assigned to.
import type { Db } from './db.js';
import { isPostgres } from './postgres-bridge.js';

export interface LabelRow {
  id: string;
  name: string;
  color: number;
}

export type LabelsRepo = ReturnType<typeof createLabelsRepo>;

export function createLabelsRepo(db: Db) {
  // numeric ids in numeric order; SQLite's CAST reads a non-number as 0, PostgreSQL's would fail, so it is guarded there
  const [numericId, numericOnly] = isPostgres(db)
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
    list(session: string, limit?: number, offset = 0): LabelRow[] {
      return (limit === undefined ? all.all(session) : page.all(session, limit, offset)) as LabelRow[];
    },
    count: (session: string): number => count.get(session) as number,
    get: (session: string, id: string): LabelRow | undefined => byId.get(session, id) as LabelRow | undefined,
    put(session: string, label: LabelRow): void {
      put.run({ session, ...label });
    },
    /** removes the label and its chat assignments */
    remove: (session: string, id: string): boolean => remove.run(session, id).changes > 0,
    /** false when the label is unknown here */
    assign(session: string, id: string, chatId: string): boolean {
      if (!byId.get(session, id)) return false;
      assign.run(session, id, chatId);
      return true;
    },
    unassign: (session: string, id: string, chatId: string): boolean => unassign.run(session, id, chatId).changes > 0,
    chats: (session: string, id: string): string[] => chats.all(session, id) as string[],
    /** the next free numeric id (labels are numbered by the client) */
    nextId: (session: string): string => String(((maxId.get(session) as number | null) ?? 0) + 1),
    /** every label of the session, with its assignments */
    clear: (session: string): void => void clear.run(session),
  };
}
