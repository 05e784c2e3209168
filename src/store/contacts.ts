// Repository of the contacts a session has learned from the network (names, LID, picture) and of its blocklist.
import type { Db } from './db.js';

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

  const get = (session: string, jid: string): ContactRow | undefined => {
    const raw = byJid.get(session, jid) as RawContact | undefined;
    return raw && toRow(raw);
  };

  return {
    get,
    /** whether the contact is stored (every 1:1 message received asks: no row object to build) */
    exists: (session: string, jid: string): boolean => known.get(session, jid) !== undefined,
    findByLid(session: string, lid: string): ContactRow | undefined {
      const raw = byLid.get(session, lid) as RawContact | undefined;
      return raw && toRow(raw);
    },
    /** creates the contact when new; changes only the fields the patch names */
    merge(session: string, jid: string, patch: ContactPatch): ContactRow {
      const current = get(session, jid);
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
      put.run({ ...row, blocked: row.blocked ? 1 : 0 });
      return row;
    },
    list(session: string, limit: number, offset: number): ContactRow[] {
      return (page.all(session, limit, offset) as RawContact[]).map(toRow);
    },
    count: (session: string): number => count.get(session) as number,
    /** the phone JIDs of the session's contacts it has not blocked, most recently seen first */
    unblockedPeople: (session: string, limit: number): string[] => people.all(session, limit) as string[],
    /** forgets everything learned for the session (it was logged out; the next pairing may be another account) */
    clear: (session: string): void => void clear.run(session),
  };
}
