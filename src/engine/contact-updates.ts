// contact.update is reported when it says something new about a contact, for both engines: the network repeats the
// same facts (Baileys maps a contact's LID to its number on almost every message it receives), and an update that
// changes nothing only costs every webhook a delivery.

export const MAX_REMEMBERED_CONTACTS = 50_000;

/** What a session last reported of each contact (the fields of its contact.update events, merged), least recently updated first. */
export class ContactUpdates {
  private readonly known = new Map<string, Record<string, string>>();

  constructor(private readonly max = MAX_REMEMBERED_CONTACTS) {}

  /** Whether `payload` changes a field of what was reported of its contact; remembers it when it does. */
  changes(payload: Record<string, unknown>): boolean {
    const id = payload.id;
    if (typeof id !== 'string') return true;
    const before = this.known.get(id);
    const fields: Record<string, string> = { ...before };
    let changed = before === undefined;
    for (const [field, value] of Object.entries(payload)) {
      const text = JSON.stringify(value) ?? 'undefined';
      if (fields[field] !== text) {
        fields[field] = text;
        changed = true;
      }
    }
    if (!changed) return false;
    this.known.delete(id);
    this.known.set(id, fields);
    if (this.known.size > this.max) this.known.delete(this.known.keys().next().value!);
    return true;
  }
}
