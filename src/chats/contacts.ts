// Contact operations of SPEC §4 "Contacts": list (from the store), get, picture, number check, block and unblock.
import { GatewayError, notFound, ValidationError } from '../errors.js';
import { jidKind, jidUser, phoneDigits, toE164 } from '../engine/jid.js';
import type { EngineSession } from '../engine/types.js';
import type { SessionManager } from '../sessions/manager.js';
import type { ContactRow, ContactsRepo } from '../store/contacts.js';
import { personJid } from './ids.js';

export const CHECK_MAX_NUMBERS = 1000;

export interface ContactView {
  id: string;
  phoneNumber: string | null;
  name: string | null;
  savedName: string | null;
  businessName: string | null;
  lid: string | null;
  pictureUrl: string | null;
}

export interface CheckResult {
  phoneNumber: string;
  registered: boolean;
  lid?: string;
}

export class ContactsService {
  constructor(private readonly deps: { sessions: SessionManager; contacts: ContactsRepo }) {}

  async list(session: string, limit: number, offset: number): Promise<{ items: ContactView[]; total: number }> {
    await this.deps.sessions.get(session);
    const [rows, total] = await Promise.all([this.deps.contacts.list(session, limit, offset), this.deps.contacts.count(session)]);
    return { items: rows.map(contactView), total };
  }

  /** Asks the network (and stores what it says); a session that is not connected answers from the store. */
  async get(session: string, contactId: string): Promise<ContactView> {
    const jid = personJid(contactId, '/contactId');
    const engine = await this.deps.sessions.connectedOrNone(session);
    if (!engine) {
      const stored = await this.stored(session, jid);
      if (!stored) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${session} is not connected and has not seen ${contactId} before`);
      return contactView(stored);
    }
    const info = await engine.getContact(jid);
    if (!info) throw notFound('CONTACT_NOT_FOUND', `contact ${contactId} (not on the network)`);
    const pictureUrl = (await engine.getProfilePicture(info.jid)) ?? null;
    const row = await this.deps.contacts.merge(session, info.jid, {
      phoneNumber: info.phoneNumber ?? null,
      lid: info.lid ?? null,
      name: info.name ?? null,
      businessName: info.businessName ?? null,
      ...(info.savedName !== undefined ? { savedName: info.savedName } : {}),
      pictureUrl,
    });
    return contactView(row);
  }

  /** 404 PICTURE_NOT_FOUND when the contact has no picture or hides it from the session. */
  async picture(session: string, contactId: string): Promise<{ id: string; url: string }> {
    const engine = await this.deps.sessions.connected(session);
    const jid = await this.canonical(engine, session, personJid(contactId, '/contactId'));
    const url = await engine.getProfilePicture(jid);
    if (await this.deps.contacts.get(session, jid)) await this.deps.contacts.merge(session, jid, { pictureUrl: url ?? null });
    if (!url) throw new GatewayError('PICTURE_NOT_FOUND', `${contactId} has no profile picture, or does not show it to this session`);
    return { id: jid, url };
  }

  /** Results in the order asked; a string that is not a phone number is a 400 naming it, not a silent "not registered". */
  async check(session: string, phoneNumbers: string[]): Promise<CheckResult[]> {
    const digitsOf = phoneNumbers.map((raw, i) => {
      const digits = checkDigits(raw);
      if (!digits) throw ValidationError.field(`/phoneNumbers/${i}`, 'is not a phone number (E.164, like +15550001111) or user JID (…@s.whatsapp.net)');
      return digits;
    });
    const engine = await this.deps.sessions.connected(session);
    const answers = new Map((await engine.checkNumbers([...new Set(digitsOf)])).map((c) => [c.phoneNumber, c]));
    return digitsOf.map((digits) => {
      const answer = answers.get(toE164(digits));
      return answer?.registered ? { phoneNumber: toE164(digits), registered: true, ...(answer.lid ? { lid: answer.lid } : {}) } : { phoneNumber: toE164(digits), registered: false };
    });
  }

  async setBlocked(session: string, contactId: string, blocked: boolean): Promise<string> {
    const engine = await this.deps.sessions.connected(session);
    const jid = await this.canonical(engine, session, personJid(contactId, '/contactId'));
    await engine.setBlocked(jid, blocked);
    await this.deps.contacts.merge(session, jid, { blocked });
    return jid;
  }

  // ---- internals ----

  private stored(session: string, jid: string): Promise<ContactRow | undefined> {
    return jidKind(jid) === 'lid' ? this.deps.contacts.findByLid(session, jid) : this.deps.contacts.get(session, jid);
  }

  /** Contacts are kept under their phone JID when the network knows it. */
  private async canonical(engine: EngineSession, session: string, jid: string): Promise<string> {
    if (jidKind(jid) !== 'lid') return jid;
    return (await this.deps.contacts.findByLid(session, jid))?.jid ?? (await engine.getContact(jid))?.jid ?? jid;
  }
}

function checkDigits(raw: string): string | null {
  const value = raw.trim();
  if (value.includes('@')) return jidKind(value) === 'user' ? jidUser(value) : null;
  return phoneDigits(value);
}

export function contactView(row: ContactRow): ContactView {
  return {
    id: row.jid,
    phoneNumber: row.phoneNumber,
    name: row.name,
    savedName: row.savedName,
    businessName: row.businessName,
    lid: row.lid,
    pictureUrl: row.pictureUrl,
  };
}
