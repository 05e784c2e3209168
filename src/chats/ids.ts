// Reading the ids routes receive (group, channel, contact and chat JIDs, phone numbers, invite codes) and the body's `session`.
import { ValidationError } from '../errors.js';
import { jidKind, normalizeJid } from '../engine/jid.js';

/** SPEC §4: some write bodies repeat the session; it must be the one in the path. */
export function checkBodySession(pathSession: string, bodySession: string | undefined): void {
  if (bodySession !== pathSession) {
    throw ValidationError.field('/session', `must be the session named in the path (${pathSession})`);
  }
}

/** `120363…@g.us`, or the part before @g.us. */
export function groupJid(raw: string, path = '/groupId'): string {
  const value = raw.trim();
  const jid = value.includes('@') ? value : `${value}@g.us`;
  if (jidKind(jid) !== 'group') throw ValidationError.field(path, 'is not a group JID (…@g.us)');
  return jid;
}

/** `…@newsletter`, or the number before @newsletter. */
export function channelJid(raw: string, path = '/channelId'): string {
  const value = raw.trim();
  const jid = value.includes('@') ? value : `${value}@newsletter`;
  if (jidKind(jid) !== 'newsletter') throw ValidationError.field(path, 'is not a channel JID (…@newsletter)');
  return jid;
}

/** A person: a phone number (E.164, + optional), a user JID or a LID. */
export function personJid(raw: string, path: string): string {
  const jid = normalizeJid(raw);
  const kind = jid ? jidKind(jid) : null;
  if (!jid || (kind !== 'user' && kind !== 'lid')) throw ValidationError.field(path, 'is not a phone number, user JID or LID');
  return jid;
}

/** A chat a label can be put on: a person or a group. */
export function chatJid(raw: string, path: string): string {
  const jid = normalizeJid(raw);
  const kind = jid ? jidKind(jid) : null;
  if (!jid || (kind !== 'user' && kind !== 'lid' && kind !== 'group')) throw ValidationError.field(path, 'is not a phone number, user JID, LID or group JID');
  return jid;
}

/** Participants of a group request, normalised and without repeats. */
export function participantJids(raw: string[], path = '/participants'): string[] {
  return [...new Set(raw.map((p, i) => personJid(p, `${path}/${i}`)))];
}

export const INVITE_BASE_URL = 'https://chat.whatsapp.com/';

/** An invite code as the network issues it; a full invite link is refused with a hint. */
export function inviteCode(raw: string, path: string): string {
  const value = raw.trim();
  if (/[/:.?#]/.test(value) || /whatsapp/i.test(value)) {
    throw ValidationError.field(path, `send only the invite code (the part after ${INVITE_BASE_URL}), not the invite link`);
  }
  if (!/^[A-Za-z0-9_-]{6,64}$/.test(value)) throw ValidationError.field(path, 'is not an invite code (6–64 letters, digits, - or _)');
  return value;
}
