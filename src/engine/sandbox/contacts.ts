// Contacts on the sandbox network: profiles (name, business name, picture that can be hidden), number checks, the blocklist, and contact.update.
import { createHash } from 'node:crypto';
import { jidKind, userJid } from '../jid.js';
import type { ChatOps, ContactInfo, ImageInput, NumberCheck } from '../types.js';
import { accountOf, digitsOf, profileOf, registeredDigits } from './accounts.js';
import { isRegisteredNumber, type SandboxNetwork } from './network.js';
import type { SandboxSession } from './session.js';

export type ContactOpName = 'getContact' | 'getProfilePicture' | 'setProfilePicture' | 'checkNumbers' | 'setBlocked';

/** What the sandbox control route may change about a number, as its owner (or the session's address book) would. */
export interface ProfilePatch {
  pushName?: string | null;
  businessName?: string | null;
  pictureUrl?: string | null;
  pictureHidden?: boolean;
  /** the name under which the session saved the number */
  savedName?: string | null;
}

/** The contact operations of one account. */
export class SandboxContacts implements Pick<ChatOps, ContactOpName> {
  constructor(
    private readonly network: SandboxNetwork,
    private readonly me: string,
    private readonly session: SandboxSession,
  ) {}

  async getContact(jid: string): Promise<ContactInfo | undefined> {
    const digits = digitsOf(this.network, jid);
    if (!digits || !isRegisteredNumber(digits)) return undefined;
    return this.info(digits);
  }

  async getProfilePicture(jid: string): Promise<string | undefined> {
    if (jidKind(jid) === 'group') {
      const group = this.network.groups.get(jid);
      return group?.members.has(this.me) ? group.picture : undefined;
    }
    const digits = digitsOf(this.network, jid);
    if (!digits || !isRegisteredNumber(digits)) return undefined;
    const profile = profileOf(this.network, digits);
    return profile.pictureHidden && digits !== this.me ? undefined : profile.pictureUrl;
  }

  async setProfilePicture(image: ImageInput | null): Promise<void> {
    const profile = profileOf(this.network, this.me);
    if (image) profile.pictureUrl = image.sourceUrl ?? `https://sandbox.invalid/pictures/${this.me}/${createHash('sha256').update(image.data).digest('hex').slice(0, 16)}.jpg`;
    else delete profile.pictureUrl;
  }

  async checkNumbers(phoneDigits: string[]): Promise<NumberCheck[]> {
    return phoneDigits.map((digits) => {
      if (!isRegisteredNumber(digits)) return { phoneNumber: `+${digits}`, registered: false };
      const lid = this.network.lidOf(digits);
      this.session.learn(digits, lid, 'lookup');
      return { phoneNumber: `+${digits}`, registered: true, lid };
    });
  }

  async setBlocked(jid: string, blocked: boolean): Promise<void> {
    const digits = registeredDigits(this.network, jid);
    const list = accountOf(this.network, this.me).blocked;
    if (list.has(digits) === blocked) return;
    if (blocked) list.add(digits);
    else list.delete(digits);
    this.session.deliver('blocklist.update', { action: blocked ? 'blocked' : 'unblocked', jids: [userJid(digits)] });
  }

  /** Sandbox control: a number changes its profile (or the session renames it in its address book); contact.update follows. */
  changeProfile(digits: string, patch: ProfilePatch): ContactInfo {
    const profile = profileOf(this.network, digits);
    if (patch.pushName !== undefined) setOrDelete(profile, 'pushName', patch.pushName);
    if (patch.businessName !== undefined) setOrDelete(profile, 'businessName', patch.businessName);
    if (patch.pictureUrl !== undefined) setOrDelete(profile, 'pictureUrl', patch.pictureUrl);
    if (patch.pictureHidden !== undefined) profile.pictureHidden = patch.pictureHidden;
    if (patch.savedName !== undefined) {
      const book = accountOf(this.network, this.me).savedNames;
      if (patch.savedName === null) book.delete(digits);
      else book.set(digits, patch.savedName);
    }
    const info = this.info(digits);
    const pictureUrl = profile.pictureHidden ? null : (profile.pictureUrl ?? null);
    this.session.deliver('contact.update', { ...contactFields(info), pictureUrl });
    return info;
  }

  private info(digits: string): ContactInfo {
    const profile = profileOf(this.network, digits);
    const savedName = accountOf(this.network, this.me).savedNames.get(digits);
    return {
      jid: userJid(digits),
      phoneNumber: `+${digits}`,
      lid: this.network.lidOf(digits),
      ...(profile.pushName ? { name: profile.pushName } : {}),
      ...(profile.businessName ? { businessName: profile.businessName } : {}),
      ...(savedName ? { savedName } : {}),
    };
  }
}

/** The contact.update payload fields of a contact: every field present, null when unknown. */
export function contactFields(info: ContactInfo): Record<string, unknown> {
  return {
    id: info.jid,
    phoneNumber: info.phoneNumber ?? null,
    lid: info.lid ?? null,
    name: info.name ?? null,
    savedName: info.savedName ?? null,
    businessName: info.businessName ?? null,
  };
}

function setOrDelete<K extends 'pushName' | 'businessName' | 'pictureUrl'>(target: { [P in K]?: string }, key: K, value: string | null): void {
  if (value === null) delete target[key];
  else target[key] = value;
}
