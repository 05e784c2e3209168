// Accounts (phone numbers with a virtual primary phone) and their devices, looked up by PN or LID jid.
import { createHash, randomBytes } from 'node:crypto';
import { Curve, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import { uintBE } from './crypto.js';
import { profile, type AddressingMode } from './profile.js';
import { VirtualPhone, type PreKeyBundle } from './virtual-phone.js';

/** A one-time pre-key id no companion holds (Baileys numbers its pre-keys from 1 up; ids are 3 bytes) */
const STALE_PREKEY_ID = 0xfffff0;

export interface AccountOptions {
  /** digits only, with country code (a leading + is stripped) */
  phone: string;
  pushName?: string;
  business?: boolean;
  /** the "about" text served to usync status queries */
  about?: string;
  /** LID user part; derived from the phone number when omitted */
  lid?: string;
}

export interface Account {
  phone: string;
  lidUser: string;
  /** `phone@s.whatsapp.net` */
  pnJid: string;
  /** `lid@lid` */
  lidJid: string;
  pushName: string;
  business: boolean;
  about: string;
  /** device 0; its identity is the account (ADV) key */
  primary: VirtualPhone;
  privacy: Record<string, string>;
  blocklist: Set<string>;
  /** 'available' | 'unavailable' as last declared by any device of the account */
  presence: 'available' | 'unavailable';
  lastSeen: number | undefined;
  nextDeviceId: number;
  /** the account's app-state sync key, shared by the phone with every companion */
  appStateKey: { keyId: Buffer; keyData: Buffer; timestamp: number };
}

export interface SignedPreKey {
  keyId: number;
  publicKey: Buffer;
  signature: Buffer;
}

export interface Device {
  account: Account;
  deviceId: number;
  /** PN device jid, `phone:1@s.whatsapp.net` (device 0: `phone@s.whatsapp.net`) */
  jid: string;
  /** LID device jid, `lid:1@lid` */
  lid: string;
  /** true for device 0, the primary phone the emulator plays */
  virtual: boolean;
  /** the companion's static Noise key; login must present it */
  noiseKey?: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKey;
  preKeys: Map<number, Buffer>;
  /** ADVSignedDeviceIdentity the companion returned in pair-device-sign */
  deviceIdentity?: Buffer;
  /** the companion's platform id from the QR (or 'code') */
  platform?: string;
  linkedAt: number;
  /** the phone already sent its post-link bootstrap (app-state key, history notification) */
  bootstrapped?: boolean;
}

export interface DeviceInfo {
  jid: string;
  lid: string;
  phone: string;
  deviceId: number;
  platform?: string;
  linkedAt: number;
}

export interface AccountInfo {
  phone: string;
  jid: string;
  lid: string;
  pushName: string;
  business: boolean;
  devices: DeviceInfo[];
}

export const deviceInfo = (d: Device): DeviceInfo => ({
  jid: d.jid,
  lid: d.lid,
  phone: d.account.phone,
  deviceId: d.deviceId,
  ...(d.platform ? { platform: d.platform } : {}),
  linkedAt: d.linkedAt,
});

export const normalisePhone = (input: string): string => {
  const digits = input.replace(/^\+/, '').replace(/[\s\-().]/g, '');
  if (!/^\d{5,20}$/.test(digits)) throw new Error(`not a phone number: ${input}`);
  return digits;
};

/** A stable 15-digit LID per phone number, so recorded stanzas diff cleanly between runs. */
const deriveLid = (phone: string): string => {
  const n = BigInt(`0x${createHash('sha256').update(`lid:${phone}`).digest('hex').slice(0, 15)}`);
  return (100_000_000_000_000n + (n % 900_000_000_000_000n)).toString();
};

export const deviceJid = (user: string, server: 's.whatsapp.net' | 'lid', device: number): string =>
  device ? `${user}:${device}@${server}` : `${user}@${server}`;

export class Registry {
  readonly accounts = new Map<string, Account>();
  /** keyed by PN device jid */
  readonly devices = new Map<string, Device>();

  createAccount(options: AccountOptions): Account {
    const phone = normalisePhone(options.phone);
    if (this.accounts.has(phone)) throw new Error(`account ${phone} exists`);
    const lidUser = options.lid ?? deriveLid(phone);
    const primary = new VirtualPhone();
    const account: Account = {
      phone,
      lidUser,
      pnJid: `${phone}@s.whatsapp.net`,
      lidJid: `${lidUser}@lid`,
      pushName: options.pushName ?? `User ${phone.slice(-4)}`,
      business: options.business ?? false,
      about: options.about ?? 'Hey there! I am using WhatsApp.',
      primary,
      privacy: { ...profile.defaultPrivacy },
      blocklist: new Set(),
      presence: 'unavailable',
      lastSeen: undefined,
      nextDeviceId: 1,
      appStateKey: { keyId: randomBytes(6), keyData: randomBytes(32), timestamp: Date.now() },
    };
    this.accounts.set(phone, account);
    const bundle = primary.bundle();
    this.devices.set(account.pnJid, {
      account,
      deviceId: 0,
      jid: account.pnJid,
      lid: account.lidJid,
      virtual: true,
      identityKey: Buffer.from(bundle.identityKey),
      registrationId: bundle.registrationId,
      signedPreKey: {
        keyId: bundle.signedPreKey.keyId,
        publicKey: Buffer.from(bundle.signedPreKey.publicKey),
        signature: Buffer.from(bundle.signedPreKey.signature),
      },
      preKeys: new Map(),
      linkedAt: Date.now(),
    });
    return account;
  }

  ensureAccount(phone: string): Account {
    return this.accounts.get(normalisePhone(phone)) ?? this.createAccount({ phone });
  }

  /** The account of a user or device jid in PN or LID form, or of a bare phone number. */
  account(jidOrPhone: string): Account | undefined {
    const decoded = jidOrPhone.includes('@') ? jidDecode(jidOrPhone) : undefined;
    if (!decoded) {
      try {
        return this.accounts.get(normalisePhone(jidOrPhone));
      } catch {
        return undefined;
      }
    }
    if (decoded.server === 'lid') {
      for (const account of this.accounts.values()) if (account.lidUser === decoded.user) return account;
      return undefined;
    }
    if (decoded.server === 's.whatsapp.net' || decoded.server === 'c.us') return this.accounts.get(decoded.user);
    return undefined;
  }

  /** Exactly one device for a device jid (no device part = device 0). */
  device(jid: string): Device | undefined {
    const account = this.account(jid);
    if (!account) return undefined;
    return this.devices.get(deviceJid(account.phone, 's.whatsapp.net', jidDecode(jid)?.device ?? 0));
  }

  /** All devices of the account of `jid` (primary first), or just the one named by a device jid. */
  devicesOf(jid: string): Device[] {
    const decoded = jidDecode(jid);
    if (decoded?.device !== undefined) {
      const one = this.device(jid);
      return one ? [one] : [];
    }
    const account = this.account(jid);
    return account ? this.accountDevices(account) : [];
  }

  accountDevices(account: Account): Device[] {
    return [...this.devices.values()].filter((d) => d.account === account).sort((a, b) => a.deviceId - b.deviceId);
  }

  companions(account: Account): Device[] {
    return this.accountDevices(account).filter((d) => !d.virtual);
  }

  addCompanion(device: Omit<Device, 'jid' | 'lid' | 'linkedAt'>): Device {
    const full: Device = {
      ...device,
      jid: deviceJid(device.account.phone, 's.whatsapp.net', device.deviceId),
      lid: deviceJid(device.account.lidUser, 'lid', device.deviceId),
      linkedAt: Date.now(),
    };
    this.devices.set(full.jid, full);
    return full;
  }

  remove(device: Device): void {
    this.devices.delete(device.jid);
  }

  /** A user jid of `account` in the given addressing. */
  userJid(account: Account, mode: AddressingMode): string {
    return mode === 'lid' ? account.lidJid : account.pnJid;
  }

  /** A device jid in the given addressing. */
  addressOf(device: Device, mode: AddressingMode): string {
    return mode === 'lid' ? device.lid : device.jid;
  }

  /** The prekey bundle of a device, consuming one of its one-time prekeys. */
  takeBundle(device: Device): PreKeyBundle {
    if (device.virtual) return device.account.primary.bundle();
    const first = device.preKeys.entries().next();
    let preKey: PreKeyBundle['preKey'];
    if (!first.done) {
      const [keyId, publicKey] = first.value;
      device.preKeys.delete(keyId);
      preKey = { keyId, publicKey };
    }
    return {
      registrationId: device.registrationId,
      identityKey: device.identityKey,
      signedPreKey: device.signedPreKey,
      ...(preKey ? { preKey } : {}),
    };
  }

  /**
   * A bundle of a companion as a stale server copy would hand it out: its identity and signed pre-key, but a one-time
   * pre-key the companion never had (or dropped), so a pkmsg built on it fails there with 'Invalid PreKey ID'.
   */
  staleBundle(device: Device): PreKeyBundle {
    const { preKey: _dropped, ...bundle } = this.takeBundle(device);
    return { ...bundle, preKey: { keyId: STALE_PREKEY_ID, publicKey: Curve.generateKeyPair().public } };
  }

  /** `<user>` of an `encrypt/key` answer. */
  keyBundleNode(jid: string): BinaryNode {
    const device = this.device(jid);
    if (!device) return { tag: 'user', attrs: { jid }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
    const bundle = this.takeBundle(device);
    const content: BinaryNode[] = [
      { tag: 'registration', attrs: {}, content: uintBE(bundle.registrationId, 4) },
      { tag: 'type', attrs: {}, content: Buffer.from([5]) },
      { tag: 'identity', attrs: {}, content: bundle.identityKey },
      {
        tag: 'skey',
        attrs: {},
        content: [
          { tag: 'id', attrs: {}, content: uintBE(bundle.signedPreKey.keyId, 3) },
          { tag: 'value', attrs: {}, content: bundle.signedPreKey.publicKey },
          { tag: 'signature', attrs: {}, content: bundle.signedPreKey.signature },
        ],
      },
    ];
    if (bundle.preKey) {
      content.push({
        tag: 'key',
        attrs: {},
        content: [
          { tag: 'id', attrs: {}, content: uintBE(bundle.preKey.keyId, 3) },
          { tag: 'value', attrs: {}, content: bundle.preKey.publicKey },
        ],
      });
    }
    if (device.deviceIdentity) content.push({ tag: 'device-identity', attrs: {}, content: device.deviceIdentity });
    return { tag: 'user', attrs: { jid }, content };
  }

  accountInfo(account: Account): AccountInfo {
    return {
      phone: account.phone,
      jid: account.pnJid,
      lid: account.lidJid,
      pushName: account.pushName,
      business: account.business,
      devices: this.companions(account).map(deviceInfo),
    };
  }

  close(): void {
    for (const account of this.accounts.values()) account.primary.close();
  }
}
