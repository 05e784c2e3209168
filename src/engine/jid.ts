// JID helpers shared by engines and services: normalising phone numbers and JIDs, JIDRef.

export interface JidRef {
  jid: string;
  phoneNumber?: string;
  lid?: string;
}

export const USER_DOMAIN = 's.whatsapp.net';

/** '+55 11 9999-8888' → '5511999988888'; null when it is not a plausible E.164 number */
export function phoneDigits(input: string): string | null {
  const digits = input.replace(/[\s\-().]/g, '').replace(/^\+/, '');
  return /^[1-9]\d{6,14}$/.test(digits) ? digits : null;
}

export function toE164(digits: string): string {
  return `+${digits}`;
}

export function userJid(digits: string): string {
  return `${digits}@${USER_DOMAIN}`;
}

export type JidKind = 'user' | 'group' | 'lid' | 'newsletter' | 'status' | 'broadcast';

const JID_PATTERNS: Array<[JidKind, RegExp]> = [
  ['user', /^\d{5,20}(:\d+)?@s\.whatsapp\.net$/],
  ['user', /^\d{5,20}(:\d+)?@c\.us$/],
  ['group', /^[\d-]{5,40}@g\.us$/],
  ['lid', /^\d{5,25}(:\d+)?@lid$/],
  ['newsletter', /^\d{5,25}@newsletter$/],
  ['status', /^status@broadcast$/],
];

export function jidKind(jid: string): JidKind | null {
  for (const [kind, pattern] of JID_PATTERNS) if (pattern.test(jid)) return kind;
  return null;
}

/** Accepts a JID, or a bare phone number which becomes a user JID; strips device suffixes; c.us → s.whatsapp.net. */
export function normalizeJid(input: string): string | null {
  const trimmed = input.trim();
  if (!trimmed.includes('@')) {
    const digits = phoneDigits(trimmed);
    return digits ? userJid(digits) : null;
  }
  if (jidKind(trimmed) === null) return null;
  const [user, server] = trimmed.split('@') as [string, string];
  const bareUser = user.split(':')[0]!;
  return `${bareUser}@${server === 'c.us' ? USER_DOMAIN : server}`;
}

export function jidUser(jid: string): string {
  return jid.split('@')[0]!.split(':')[0]!;
}

export function phoneOfJid(jid: string): string | undefined {
  return jidKind(jid) === 'user' ? toE164(jidUser(jid)) : undefined;
}

export function jidRef(jid: string, extra: { phoneNumber?: string; lid?: string } = {}): JidRef {
  const ref: JidRef = { jid };
  const phoneNumber = extra.phoneNumber ?? phoneOfJid(jid);
  if (phoneNumber) ref.phoneNumber = phoneNumber;
  const lid = extra.lid ?? (jidKind(jid) === 'lid' ? jid : undefined);
  if (lid) ref.lid = lid;
  return ref;
}
