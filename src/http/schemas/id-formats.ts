// The one check of phone numbers and JIDs where they enter: ajv formats built on src/engine/jid.ts, each with the sentence
// a 400 gives for an item that fails it (so `details` says `/phoneNumbers/3 is not a phone number…`).
import { jidKind, normalizeJid, phoneDigits, type JidKind } from '../../engine/jid.js';

export interface IdFormat {
  validate(value: string): boolean;
  message: string;
  /** the same rule as an ECMA-262 pattern, for the document (generated clients and validators check it too) */
  pattern: string;
  description: string;
}

/** what src/engine/jid.ts reads, as pattern text: spaces around are trimmed; separators in phone numbers are dropped */
const SEP = '[\\s\\-().]*';
const PHONE = `${SEP}\\+?${SEP}[1-9](?:${SEP}[0-9]){6,14}${SEP}`;
const USER_JID = '[0-9]{5,20}(?::[0-9]+)?@(?:s\\.whatsapp\\.net|c\\.us)';
const LID = '[0-9]{5,25}(?::[0-9]+)?@lid';
const GROUP_JID = '[0-9-]{5,40}@g\\.us';
const CHANNEL_JID = '[0-9]{5,25}@newsletter';
const trimmed = (...alternatives: string[]) => `^\\s*(?:${alternatives.join('|')})\\s*$`;

const kindOf = (value: string): JidKind | null => {
  const jid = normalizeJid(value);
  return jid ? jidKind(jid) : null;
};

export const ID_FORMATS = {
  /** a phone number: E.164 digits, `+`, spaces, dashes, dots and brackets allowed */
  'wa-phone-number': {
    validate: (value) => !value.includes('@') && phoneDigits(value.trim()) !== null,
    message: 'is not a phone number (E.164, like +15550001111)',
    pattern: `^${PHONE}$`,
    description: 'a phone number in E.164 (`+15550001111`; spaces, dashes, dots and brackets are ignored)',
  },
  /** a phone number or the user JID of one */
  'wa-phone': {
    validate: (value) => kindOf(value) === 'user',
    message: 'is not a phone number (E.164, like +15550001111) or user JID (…@s.whatsapp.net)',
    pattern: trimmed(PHONE, USER_JID),
    description: 'a phone number (E.164, `+15550001111`) or its user JID (`15550001111@s.whatsapp.net`)',
  },
  /** a person: phone number, user JID or LID */
  'wa-person': {
    validate: (value) => {
      const kind = kindOf(value);
      return kind === 'user' || kind === 'lid';
    },
    message: 'is not a phone number, user JID (…@s.whatsapp.net) or LID (…@lid)',
    pattern: trimmed(PHONE, USER_JID, LID),
    description: 'a person: a phone number (E.164), user JID (`…@s.whatsapp.net`) or LID (`…@lid`)',
  },
  /** a group JID, `…@g.us` */
  'wa-group': {
    validate: (value) => jidKind(value.trim()) === 'group',
    message: 'is not a group JID (…@g.us)',
    pattern: trimmed(GROUP_JID),
    description: 'a group JID (`120363000000000001@g.us`)',
  },
  /** a chat a label can be put on: a person or a group */
  'wa-person-or-group': {
    validate: (value) => {
      const kind = kindOf(value);
      return kind === 'user' || kind === 'lid' || kind === 'group';
    },
    message: 'is not a phone number, user JID, LID or group JID',
    pattern: trimmed(PHONE, USER_JID, LID, GROUP_JID),
    description: 'a person (phone number, user JID or LID) or a group JID (`…@g.us`)',
  },
  /** any chat: phone number, user JID, LID, group, channel or status@broadcast */
  'wa-chat': {
    validate: (value) => normalizeJid(value) !== null,
    message: 'is not a phone number or JID (…@s.whatsapp.net, …@lid, …@g.us, …@newsletter, status@broadcast)',
    pattern: trimmed(PHONE, USER_JID, LID, GROUP_JID, CHANNEL_JID, 'status@broadcast'),
    description: 'a chat: a phone number (E.164), user JID, LID, group JID (`…@g.us`), channel JID (`…@newsletter`) or `status@broadcast`',
  },
} satisfies Record<string, IdFormat>;

export type IdFormatName = keyof typeof ID_FORMATS;

export function idFormatMessage(name: string): string | undefined {
  return Object.hasOwn(ID_FORMATS, name) ? ID_FORMATS[name as IdFormatName].message : undefined;
}

/** A string schema of one of these formats; its pattern and description say the format for the document. */
export const idString = (format: IdFormatName, maxLength = 128) =>
  ({ type: 'string', maxLength, format, pattern: ID_FORMATS[format].pattern, description: ID_FORMATS[format].description, 'x-invalid-message': ID_FORMATS[format].message }) as const;

/** Path parameters that name a group or a channel: the JID, or the part before its `@`. */
export const groupRef = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: `^\\s*[0-9-]{5,40}(?:@g\\.us)?\\s*$`,
  description: 'the group JID, `…@g.us` (or the part before `@g.us`)',
  'x-invalid-message': 'is not a group JID (…@g.us)',
} as const;
export const channelRef = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: `^\\s*[0-9]{5,25}(?:@newsletter)?\\s*$`,
  description: 'the channel JID, `…@newsletter` (or the number before `@newsletter`)',
  'x-invalid-message': 'is not a channel JID (…@newsletter)',
} as const;
