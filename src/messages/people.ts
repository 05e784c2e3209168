// The people of stored messages under both their ids: a sender stored by phone JID gets its LID, one stored by LID its
// number, from the pairs the session learnt (read when the messages are, so a pair learnt later names older messages too).
import { phoneOfJid } from '../engine/jid.js';
import type { IdentitiesRepo, StoredIdentity } from '../store/identities.js';
import type { StoredMessage } from './service.js';

export type PairFinder = Pick<IdentitiesRepo, 'find'>;

/** Fills `senderPhoneNumber` and `senderLid` of the views whose sender's pair the session knows (one read per sender). */
export async function nameSenders(identities: PairFinder | undefined, session: string, views: StoredMessage[]): Promise<StoredMessage[]> {
  if (!identities) return views;
  const pairs = new Map<string, StoredIdentity | undefined>();
  for (const view of views) {
    if (!view.sender || (view.senderPhoneNumber && view.senderLid)) continue;
    if (!pairs.has(view.sender)) pairs.set(view.sender, await identities.find(session, view.sender));
    const pair = pairs.get(view.sender);
    if (!pair) continue;
    view.senderPhoneNumber = phoneOfJid(pair.pn) ?? view.senderPhoneNumber;
    view.senderLid = pair.lid;
  }
  return views;
}
