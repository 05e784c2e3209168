// Which stored chat a LID names. One chat per person: a LID whose phone number the session knows is the number's chat;
// but a chat stored under the LID itself (before the number was learnt: its messages are keyed by it, and the chat list
// shows it so) is that chat, so that every chat the list shows can be opened by the id it shows.
import type { ChatsRepo } from '../store/chats.js';
import type { ContactsRepo } from '../store/contacts.js';
import type { IdentitiesRepo } from '../store/identities.js';
import { jidKind } from '../engine/jid.js';

export interface StoredChatDeps {
  chats: Pick<ChatsRepo, 'get'>;
  contacts: Pick<ContactsRepo, 'findByLid'>;
  identities?: Pick<IdentitiesRepo, 'find'>;
}

/** `jid` (normalized) as the chat the session stores it under: the LID's own chat when there is one, else the number's */
export async function storedChatOf(deps: StoredChatDeps, session: string, jid: string): Promise<string> {
  if (jidKind(jid) !== 'lid' || (await deps.chats.get(session, jid))) return jid;
  return (await deps.contacts.findByLid(session, jid))?.jid ?? (await deps.identities?.find(session, jid))?.pn ?? jid;
}
