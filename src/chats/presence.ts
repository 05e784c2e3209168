// Presence of SPEC §4 "Presence": set own, subscribe to contacts, and their last-known presence from the store.
import { GatewayError, notFound } from '../errors.js';
import { jidKind } from '../engine/jid.js';
import type { EngineEventProcessor, SessionManager } from '../sessions/manager.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { PresenceRepo, PresenceRow } from '../store/presence.js';
import type { Logger } from '../logger.js';
import { personJid } from './ids.js';

export interface PresenceRecord {
  chatId: string;
  presence: 'available' | 'unavailable' | 'composing' | 'recording';
  /** ISO 8601; absent when the contact hides it or it is not known */
  lastSeen?: string;
}

export class PresenceService {
  constructor(private readonly deps: { sessions: SessionManager; presence: PresenceRepo; contacts: ContactsRepo; logger: Logger }) {}

  async set(session: string, presence: 'available' | 'unavailable'): Promise<void> {
    await (await this.deps.sessions.connected(session)).setPresence(presence);
  }

  /** presence.update events for the contact follow; the subscription is kept and renewed on every reconnect. */
  async subscribe(session: string, chatId: string): Promise<string> {
    const engine = await this.deps.sessions.connected(session);
    let jid = await this.canonical(session, personJid(chatId, '/chatId'));
    if (jidKind(jid) === 'lid') jid = (await engine.getContact(jid))?.jid ?? jid;
    await engine.subscribePresence(jid);
    await this.deps.presence.subscribe(session, jid);
    return jid;
  }

  async get(session: string, chatId: string): Promise<PresenceRecord> {
    await this.deps.sessions.get(session);
    const jid = await this.canonical(session, personJid(chatId, '/chatId'));
    const row = await this.deps.presence.get(session, jid);
    if (!row) throw notFound('CONTACT_NOT_FOUND', `presence of ${jid} (subscribe to it first)`);
    return recordOf(row);
  }

  async list(session: string, limit: number, offset: number): Promise<{ items: PresenceRecord[]; total: number }> {
    await this.deps.sessions.get(session);
    const [rows, total] = await Promise.all([this.deps.presence.listSubscribed(session, limit, offset), this.deps.presence.countSubscribed(session)]);
    return { items: rows.map(recordOf), total };
  }

  /** Subscriptions do not survive a reconnect on the network: renew them whenever the session connects. */
  resubscriber(): EngineEventProcessor {
    return (session, type) => {
      if (type !== 'session.connected') return;
      // after the event is published, and apart from it: renewals can go in any order, and failing one loses nothing
      setImmediate(() => void this.resubscribe(session).catch((err: unknown) => this.deps.logger.warn({ err, session }, 'presence subscriptions not renewed')));
    };
  }

  private async resubscribe(session: string): Promise<void> {
    let engine;
    try {
      engine = await this.deps.sessions.connected(session);
    } catch (err) {
      if (err instanceof GatewayError) return;
      // the store is out of reach: the subscriptions are renewed at the next connect
      return this.deps.logger.warn({ err, session }, 'could not read the session to renew its presence subscriptions');
    }
    let jids: string[];
    try {
      jids = await this.deps.presence.subscribedJids(session);
    } catch (err) {
      return this.deps.logger.warn({ err, session }, 'could not read the presence subscriptions to renew');
    }
    for (const jid of jids) {
      engine.subscribePresence(jid).catch((err: unknown) => this.deps.logger.warn({ err, session, jid }, 'presence resubscription failed'));
    }
  }

  /** A LID the store can map to a phone JID becomes that JID, so records are kept under one name. */
  private async canonical(session: string, jid: string): Promise<string> {
    if (jidKind(jid) !== 'lid') return jid;
    return (await this.deps.contacts.findByLid(session, jid))?.jid ?? jid;
  }
}

function recordOf(row: PresenceRow): PresenceRecord {
  return {
    chatId: row.jid,
    presence: row.presence ?? 'unavailable',
    ...(row.lastSeen !== null ? { lastSeen: new Date(row.lastSeen * 1000).toISOString() } : {}),
  };
}
