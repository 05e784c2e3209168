// Phone number ↔ LID identities of a session (issue 30): one person by either id, and a bounded batch of them. Answers
// come from the pairs the session learnt (kept by the engines in the identities table) and its contacts; a phone number
// neither knows is asked of the network (one number check for the whole request), a LID is not (the network tells the
// number behind a LID only with the person's own messages).
import { GatewayError, ValidationError } from '../errors.js';
import { jidKind, jidUser, phoneOfJid, userJid } from '../engine/jid.js';
import type { EngineSession, IdentitySource } from '../engine/types.js';
import type { SessionManager } from '../sessions/manager.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { IdentitiesRepo } from '../store/identities.js';
import { personJid } from './ids.js';

/** the most ids one lookup takes; also the most numbers one request asks the network about */
export const IDENTITY_LOOKUP_MAX = 100;

export interface IdentityView {
  /** the id as asked, normalised (a phone JID or a LID) */
  id: string;
  /** the person's phone JID (…@s.whatsapp.net): the id chats and messages of the person are stored under */
  jid: string;
  /** E.164 */
  phoneNumber: string;
  lid: string;
  /** where the session learnt the pair (`lookup` for one asked of the network now); null when not recorded */
  source: IdentitySource | null;
  /** when the session learnt the pair (or it last changed); null when not recorded */
  learntAt: string | null;
  /** when the session last stored the pair (refreshed at most hourly while it keeps being seen); null when just asked of the network */
  seenAt: string | null;
}

export class IdentityService {
  constructor(
    private readonly deps: {
      sessions: Pick<SessionManager, 'get' | 'connectedOrNone'>;
      identities: Pick<IdentitiesRepo, 'find'>;
      contacts: Pick<ContactsRepo, 'get' | 'findByLid'>;
    },
  ) {}

  /** One person; 404 IDENTITY_NOT_FOUND when neither the session nor (for a phone number) the network knows the pair. */
  async get(session: string, id: string): Promise<IdentityView> {
    const jid = personJid(id, '/contactId');
    await this.deps.sessions.get(session);
    const stored = await this.stored(session, jid);
    if (stored) return stored;
    if (jidKind(jid) === 'lid') throw new GatewayError('IDENTITY_NOT_FOUND', `the session does not know the phone number behind ${jid}`);
    const engine = await this.deps.sessions.connectedOrNone(session);
    if (!engine) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${session} is not connected, and has not learnt the LID of ${jid}`);
    const [found] = await this.ask(engine, [jid]);
    if (!found) throw new GatewayError('IDENTITY_NOT_FOUND', `${phoneOfJid(jid)} has no LID the network tells (not on WhatsApp)`);
    return found;
  }

  /**
   * Each id's pair, in the order asked; null for one not known. The stored pairs first; the phone numbers they lack are
   * asked of the network in one number check when the session is connected (otherwise they are null).
   */
  async lookup(session: string, ids: string[]): Promise<Array<IdentityView | null>> {
    if (ids.length > IDENTITY_LOOKUP_MAX) throw ValidationError.field('/ids', `must have at most ${IDENTITY_LOOKUP_MAX} items`);
    const jids = ids.map((id, i) => personJid(id, `/ids/${i}`));
    await this.deps.sessions.get(session);
    const found = new Map<string, IdentityView>();
    for (const jid of new Set(jids)) {
      const stored = await this.stored(session, jid);
      if (stored) found.set(jid, stored);
    }
    const unknownPhones = [...new Set(jids)].filter((jid) => !found.has(jid) && jidKind(jid) === 'user');
    if (unknownPhones.length) {
      const engine = await this.deps.sessions.connectedOrNone(session);
      if (engine) for (const view of await this.ask(engine, unknownPhones)) if (view) found.set(view.id, view);
    }
    return jids.map((jid) => {
      const view = found.get(jid);
      return view ? { ...view, id: jid } : null;
    });
  }

  // ---- internals ----

  /** The pair the session learnt (the engines' identities), else one its contacts hold. */
  private async stored(session: string, jid: string): Promise<IdentityView | undefined> {
    const pair = await this.deps.identities.find(session, jid);
    if (pair) return view(jid, pair.pn, pair.lid, { source: pair.source, learntAt: pair.learntAt, seenAt: pair.usedAt });
    const contact = jidKind(jid) === 'lid' ? await this.deps.contacts.findByLid(session, jid) : await this.deps.contacts.get(session, jid);
    const pn = contact ? (jidKind(contact.jid) === 'user' ? contact.jid : contact.phoneNumber ? userJid(contact.phoneNumber.slice(1)) : undefined) : undefined;
    if (!contact || !pn || !contact.lid) return undefined;
    return view(jid, pn, contact.lid, { source: 'contact', learntAt: null, seenAt: contact.updatedAt });
  }

  /** One number check for the phone JIDs (at most IDENTITY_LOOKUP_MAX): the pairs of those the network knows. */
  private async ask(engine: EngineSession, pns: string[]): Promise<Array<IdentityView | undefined>> {
    const asked = Date.now();
    const checks = await engine.checkNumbers(pns.slice(0, IDENTITY_LOOKUP_MAX).map(jidUser));
    const byNumber = new Map(checks.map((c) => [c.phoneNumber, c]));
    return pns.map((pn) => {
      const check = byNumber.get(phoneOfJid(pn)!);
      return check?.registered && check.lid ? view(pn, pn, check.lid, { source: 'lookup', learntAt: asked, seenAt: null }) : undefined;
    });
  }

}

function view(id: string, pn: string, lid: string, origin: { source: IdentitySource | null; learntAt: number | null; seenAt: number | null }): IdentityView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return { id, jid: pn, phoneNumber: phoneOfJid(pn)!, lid, source: origin.source, learntAt: iso(origin.learntAt), seenAt: iso(origin.seenAt) };
}
