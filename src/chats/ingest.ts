// What happens to contact, presence, blocklist, label and channel events before they are published: the store learns from them.
import { jidKind } from '../engine/jid.js';
import type { JidRef } from '../engine/jid.js';
import type { EngineEventProcessor } from '../sessions/manager.js';
import type { ChannelsRepo } from '../store/channels.js';
import type { ChatsRepo, SyncedChat } from '../store/chats.js';
import type { ContactPatch, ContactsRepo } from '../store/contacts.js';
import type { LabelsRepo } from '../store/labels.js';
import type { PresenceRepo, StoredPresence } from '../store/presence.js';

export interface ChatStores {
  contacts: ContactsRepo;
  presence: PresenceRepo;
  channels: ChannelsRepo;
  labels: LabelsRepo;
  chats: ChatsRepo;
}

const CONTACT_FIELDS = ['phoneNumber', 'lid', 'name', 'savedName', 'businessName', 'pictureUrl'] as const;

export function createChatIngest(stores: ChatStores): EngineEventProcessor {
  // synchronous, with its writes staged, for the frequent events (a message, a presence); the others read first and
  // return a promise, which holds the session's later events back until it settles
  return function ingestChatEvent(session, type, payload) {
    switch (type) {
      case 'contact.update': {
        const id = payload.id as string | undefined;
        if (!id) return;
        const patch: ContactPatch = {};
        for (const field of CONTACT_FIELDS) if (payload[field] !== undefined) patch[field] = payload[field] as string | null;
        return stores.contacts.merge(session, id, patch).then(() => undefined);
      }
      case 'message.received': {
        // whoever writes to the session 1:1 becomes a contact it can see
        const from = payload.from as JidRef | undefined;
        if (payload.fromMe || payload.isGroup || !from || jidKind(from.jid) !== 'user') return;
        stores.contacts.addIfAbsent(session, from.jid, { phoneNumber: from.phoneNumber ?? null, lid: from.lid ?? null });
        return;
      }
      case 'presence.update':
        recordPresence(session, payload);
        return;
      case 'chat.archive':
        stores.chats.archive(session, payload.chatId as string, payload.archived === true);
        return;
      case 'chat.mute': {
        const until = payload.muteEndTime ? Date.parse(payload.muteEndTime as string) : -1;
        stores.chats.mute(session, payload.chatId as string, payload.muted ? until : null);
        return;
      }
      case 'chat.read':
        stores.chats.read(session, payload.chatId as string, payload.read === true);
        return;
      case 'chat.pin':
        stores.chats.pin(session, payload.chatId as string, payload.pinned ? Date.parse(payload.timestamp as string) || Date.now() : null);
        return;
      case 'history.sync': {
        // the engine hands over the chats of the sync; the event carries only their count (chatCount)
        const chats = payload.chats as SyncedChat[] | undefined;
        delete payload.chats;
        if (chats?.length) stores.chats.sync(session, chats);
        return;
      }
      case 'group.update':
        // a group is a chat of the session from when it is made or joined, named by its subject
        if (typeof payload.newSubject === 'string' && payload.newSubject) stores.chats.rename(session, payload.id as string, payload.newSubject);
        return;
      case 'chat.delete':
        stores.chats.remove(session, payload.chatId as string);
        return;
      case 'blocklist.update': {
        const blocked = payload.action === 'blocked';
        return blockAll(session, (payload.jids as string[] | undefined) ?? [], blocked);
      }
      case 'labels.update':
        return applyLabelChange(session, payload);
      case 'newsletter.update':
        return applyChannelChange(session, payload);
      case 'session.logged_out':
        // the device is unlinked: what it learned belongs to that account, and the next pairing may be another one
        return forgetAll(session);
      default:
        return;
    }
  };

  function recordPresence(session: string, payload: Record<string, unknown>): void {
    const from = payload.from as JidRef | undefined;
    const presence: StoredPresence = payload.unavailable
      ? 'unavailable'
      : payload.state === 'composing'
        ? payload.media === 'audio'
          ? 'recording'
          : 'composing'
        : 'available';
    // every presence.update carries the finer value, whichever part of the engine reported it
    payload.presence ??= presence;
    if (!from || jidKind(from.jid) !== 'user' || payload.sender) return;
    stores.presence.record(session, from.jid, presence, typeof payload.lastSeen === 'number' ? payload.lastSeen : null);
  }

  async function blockAll(session: string, jids: string[], blocked: boolean): Promise<void> {
    for (const jid of jids) await stores.contacts.merge(session, jid, { blocked });
  }

  async function forgetAll(session: string): Promise<void> {
    for (const store of Object.values(stores)) await store.clear(session);
  }

  /** Engines report saved/deleted/assigned/unassigned; the event says created or updated, as the store knew the label. */
  async function applyLabelChange(session: string, payload: Record<string, unknown>): Promise<void> {
    const label = payload.label as { id: string; name: string; color: number } | undefined;
    switch (payload.action) {
      case 'saved':
        if (!label) return;
        payload.action = (await stores.labels.get(session, label.id)) ? 'updated' : 'created';
        stores.labels.put(session, label);
        return;
      case 'deleted':
        if (label) await stores.labels.remove(session, label.id);
        return;
      case 'assigned':
        await stores.labels.assign(session, payload.labelId as string, payload.chatId as string);
        return;
      case 'unassigned':
        await stores.labels.unassign(session, payload.labelId as string, payload.chatId as string);
        return;
    }
  }

  /** Synchronous (staged writes) except for a removal, whose promise it returns. */
  function applyChannelChange(session: string, payload: Record<string, unknown>): Promise<void> | undefined {
    const id = payload.id as string | undefined;
    if (!id) return;
    const name = typeof payload.name === 'string' ? payload.name : undefined;
    switch (payload.action) {
      case 'created':
        stores.channels.put(session, id, 'owner', name);
        return;
      case 'followed':
        stores.channels.put(session, id, 'follower', name);
        return;
      case 'unfollowed':
      case 'deleted':
        return stores.channels.remove(session, id).then(() => undefined);
      case 'muted':
      case 'unmuted':
        stores.channels.setMuted(session, id, payload.action === 'muted');
        return;
    }
  }
}
