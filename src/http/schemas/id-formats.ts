// The one check of phone numbers and JIDs where they enter: ajv formats built on src/engine/jid.ts, each with the sentence
// a 400 gives for an item that fails it (so `details` says `/phoneNumbers/3 is not a phone number…`).
import { jidKind, normalizeJid, phoneDigits, type JidKind } from '../../engine/jid.js';

export interface IdFormat {
  validate(value: string): boolean;
  message: string;
}

const kindOf = (value: string): JidKind | null => {
  const jid = normalizeJid(value);
  return jid ? jidKind(jid) : null;
};

export const ID_FORMATS = {
  /** a phone number: E.164 digits, `+`, spaces, dashes, dots and brackets allowed */
  'wa-phone-number': {
    validate: (value) => !value.includes('@') && phoneDigits(value.trim()) !== null,
    message: 'is not a phone number (E.164, like +15550001111)',
  },
  /** a phone number or the user JID of one */
  'wa-phone': {
    validate: (value) => kindOf(value) === 'user',
    message: 'is not a phone number (E.164, like +15550001111) or user JID (…@s.whatsapp.net)',
  },
  /** a person: phone number, user JID or LID */
  'wa-person': {
    validate: (value) => {
      const kind = kindOf(value);
      return kind === 'user' || kind === 'lid';
    },
    message: 'is not a phone number, user JID (…@s.whatsapp.net) or LID (…@lid)',
  },
  /** a group JID, `…@g.us` */
  'wa-group': {
    validate: (value) => jidKind(value.trim()) === 'group',
    message: 'is not a group JID (…@g.us)',
  },
  /** any chat: phone number, user JID, LID, group, channel or status@broadcast */
  'wa-chat': {
    validate: (value) => normalizeJid(value) !== null,
    message: 'is not a phone number or JID (…@s.whatsapp.net, …@lid, …@g.us, …@newsletter, status@broadcast)',
  },
} satisfies Record<string, IdFormat>;

export type IdFormatName = keyof typeof ID_FORMATS;

export function idFormatMessage(name: string): string | undefined {
  return Object.hasOwn(ID_FORMATS, name) ? ID_FORMATS[name as IdFormatName].message : undefined;
}

/** A string schema of one of these formats. */
export const idString = (format: IdFormatName, maxLength = 128) => ({ type: 'string', maxLength, format }) as const;
