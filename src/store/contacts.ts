// Repository of the contacts a session has learned from the network (names, LID, picture) and of its blocklist.
import type { Db } from './db.js';
import { RecentWrites } from './recent-writes.js';

export interface ContactRow {
  session: string;
  jid: string;
  phoneNumber: string | null;
  lid: string | null;
  name: string | null;
  savedName: string | null;
  businessName: string | null;
  pictureUrl: string | null;
  blocked: boolean;
  updatedAt: number;
}

/** Fields to change: undefined keeps the stored value, null clears it. */
export type ContactPatch = Partial<Pick<ContactRow, 'phoneNumber' | 'lid' | 'name' | 'savedName' | 'businessName' | 'pictureUrl' | 'blocked'>>;

interface RawContact {
  session: string;
  jid: string;
  phone_number: string | null;
  lid: string | null;
  name: string | null;
  saved_name: string | null;
  business_name: string | null;
  picture_url: string | null;
  blocked: number;
  updated_at: number;
}

const toRow = (r: RawContact): ContactRow => ({
  session: r.session,
  jid: r.jid,
  phoneNumber: r.phone_number,
  lid: r.lid,
  name: r.name,
  savedName: r.saved_name,
  businessName: r.business_name,
  pictureUrl: r.picture_url,
  blocked: r.blocked === 1,
  updatedAt: r.updated_at,
});

export type ContactsRepo = ReturnType<typeof createContactsRepo>;

export function createContactsRepo(db: Db) {
  const byJid = db.prepare('SELECT * FROM contacts WHERE session = ? AND jid = ?');
  const known = db.prepare('SELECT 1 FROM contacts WHERE session = ? AND jid = ?').pluck();
  const byLid = db.prepare('SELECT * FROM contacts WHERE session = ? AND lid = ? LIMIT 1');
  const page = db.prepare('SELECT * FROM contacts WHERE session = ? ORDER BY jid LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT COUNT(*) FROM contacts WHERE session = ?').pluck();
  const clear = db.prepare('DELETE FROM contacts WHERE session = ?');
  const people = db
    .prepare("SELECT jid FROM contacts WHERE session = ? AND blocked = 0 AND jid LIKE '%@s.whatsapp.net' ORDER BY updated_at DESC, jid LIMIT ?")
    .pluck();
  const put = db.prepare(
    `INSERT INTO contacts (session, jid, phone_number, lid, name, saved_name, business_name, picture_url, blocked, updated_at)
     VALUES (@session, @jid, @phoneNumber, @lid, @name, @savedName, @businessName, @pictureUrl, @blocked, @updatedAt)
     ON CONFLICT (session, jid) DO UPDATE SET phone_number = excluded.phone_number, lid = excluded.lid, name = excluded.name,
       saved_name = excluded.saved_name, business_name = excluded.business_name, picture_url = excluded.picture_url,
       blocked = excluded.blocked, updated_at = excluded.updated_at`,
  );

  const addNew = db.prepare(
    `INSERT INTO contacts (session, jid, phone_number, lid, blocked, updated_at) VALUES (?, ?, ?, ?, 0, ?)
     ON CONFLICT (session, jid) DO NOTHING`,
  );

  const recentlyAdded = new RecentWrites();

  const get = async (session: string, jid: string): Promise<ContactRow | undefined> => {
    const raw = (await byJid.get(session, jid)) as RawContact | undefined;
    return raw && toRow(raw);
  };

  return {
    get,
    exists: async (session: string, jid: string): Promise<boolean> => (await known.get(session, jid)) !== undefined,
    /**
     * Stores a contact seen for the first time (every 1:1 message received tells it: no read, no row object, and no write
     * for a sender added within the last minute); one already stored is left as it is. Staged into the tick (joined here).
     */
    addIfAbsent(session: string, jid: string, ids: { phoneNumber: string | null; lid: string | null }): void {
      if (!recentlyAdded.due(`${session}\u0000${jid}`)) return;
      db.tick?.join();
      addNew.stage(session, jid, ids.phoneNumber, ids.lid, Date.now());
    },
    async findByLid(session: string, lid: string): Promise<ContactRow | undefined> {
      const raw = (await byLid.get(session, lid)) as RawContact | undefined;
      return raw && toRow(raw);
    },
    /** creates the contact when new; changes only the fields the patch names */
    async merge(session: string, jid: string, patch: ContactPatch): Promise<ContactRow> {
      const current = await get(session, jid);
      const row: ContactRow = {
        session,
        jid,
        phoneNumber: null,
        lid: null,
        name: null,
        savedName: null,
        businessName: null,
        pictureUrl: null,
        blocked: false,
        ...current,
        ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
        updatedAt: Date.now(),
      };
      await put.run({ ...row, blocked: row.blocked ? 1 : 0 });
      return row;
    },
    async list(session: string, limit: number, offset: number): Promise<ContactRow[]> {
      return ((await page.all(session, limit, offset)) as RawContact[]).map(toRow);
    },
    count: async (session: string): Promise<number> => (await count.get(session)) as number,
    /** the phone JIDs of the session's contacts it has not blocked, most recently seen first */
    unblockedPeople: async (session: string, limit: number): Promise<string[]> => (await people.all(session, limit)) as string[],
    /** forgets everything learned for the session (it was logged out; the next pairing may be another account) */
    /** after a lost tick: a contact counted added may not be stored */
    forgetRecentWrites: (): void => recentlyAdded.forget(),
    async clear(session: string): Promise<void> {
      recentlyAdded.forget();
      await clear.run(session);
    },
  };
}
