// The primary phone of an account (Signal device 0), simulated by the emulator with Baileys' own Signal repository.
import {
  addTransactionCapability,
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  encodeWAMessage,
  generateSignalPubKey,
  initAuthCreds,
  proto,
  unpadRandomMax16,
  type AuthenticationCreds,
  type KeyPair,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import { silentLogger } from './log.js';
import { memoryKeyStore } from './memory-auth.js';

type SignalRepository = ReturnType<typeof DEFAULT_CONNECTION_CONFIG.makeSignalRepository>;

/** The public half of a device's keys, as served by `encrypt/key` and fed to `injectE2ESession`. */
export interface PreKeyBundle {
  registrationId: number;
  identityKey: Uint8Array;
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  preKey?: { keyId: number; publicKey: Uint8Array };
}

export const toE2ESession = (bundle: PreKeyBundle) => ({
  registrationId: bundle.registrationId,
  identityKey: generateSignalPubKey(bundle.identityKey),
  signedPreKey: { ...bundle.signedPreKey, publicKey: generateSignalPubKey(bundle.signedPreKey.publicKey) },
  ...(bundle.preKey ? { preKey: { ...bundle.preKey, publicKey: generateSignalPubKey(bundle.preKey.publicKey) } } : {}),
});

export type Ciphertext = { type: 'pkmsg' | 'msg'; ciphertext: Uint8Array };

export class VirtualPhone {
  readonly creds: AuthenticationCreds;
  private readonly rows = new Map<string, unknown>();
  private readonly keys: SignalKeyStore;
  private readonly repository: SignalRepository;
  private chain: Promise<unknown> = Promise.resolve();
  private nextPreKeyId = 1;

  constructor() {
    this.creds = initAuthCreds();
    this.keys = memoryKeyStore(this.rows);
    const keys = addTransactionCapability(this.keys, silentLogger, { maxCommitRetries: 1, delayBetweenTriesMs: 0 });
    this.repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: this.creds, keys }, silentLogger);
  }

  /** The account key: signs companion identities (ADV) and is this device's Signal identity. */
  get identity(): KeyPair {
    return this.creds.signedIdentityKey;
  }

  /** Device 0's bundle, with a fresh one-time prekey each call (its private half stays here). */
  bundle(): PreKeyBundle {
    const keyId = this.nextPreKeyId++;
    const preKey = Curve.generateKeyPair();
    void this.keys.set({ 'pre-key': { [keyId]: preKey } }); // synchronous for the memory store
    return {
      registrationId: this.creds.registrationId,
      identityKey: this.identity.public,
      signedPreKey: {
        keyId: this.creds.signedPreKey.keyId,
        publicKey: this.creds.signedPreKey.keyPair.public,
        signature: this.creds.signedPreKey.signature,
      },
      preKey: { keyId, publicKey: preKey.public },
    };
  }

  /** Decrypts a pkmsg/msg from `senderJid` (always pass the same jid form for one device). */
  decrypt(senderJid: string, type: 'pkmsg' | 'msg', ciphertext: Uint8Array): Promise<proto.Message> {
    return this.serial(async () => {
      const plain = await this.repository.decryptMessage({ jid: senderJid, type, ciphertext });
      return proto.Message.decode(unpadRandomMax16(plain));
    });
  }

  decryptGroup(group: string, authorJid: string, ciphertext: Uint8Array): Promise<proto.Message> {
    return this.serial(async () => {
      const plain = await this.repository.decryptGroupMessage({ group, authorJid, msg: ciphertext });
      return proto.Message.decode(unpadRandomMax16(plain));
    });
  }

  processSenderKey(authorJid: string, item: proto.Message.ISenderKeyDistributionMessage): Promise<void> {
    return this.serial(() => this.repository.processSenderKeyDistributionMessage({ authorJid, item }));
  }

  /** Encrypts `message` for one device, building the session from `bundle()` of that device if there is none. */
  encrypt(recipientJid: string, message: proto.IMessage, bundle: () => PreKeyBundle | undefined): Promise<Ciphertext> {
    return this.serial(async () => {
      const { exists } = await this.repository.validateSession(recipientJid);
      if (!exists) {
        const fresh = bundle();
        if (!fresh) throw new Error(`no key bundle for ${recipientJid}`);
        await this.repository.injectE2ESession({ jid: recipientJid, session: toE2ESession(fresh) });
      }
      return this.repository.encryptMessage({ jid: recipientJid, data: encodeWAMessage(message) });
    });
  }

  /**
   * Encrypts `message` for one device on a new session built from `bundle`, whatever session there was. With
   * `keepSession: false` that session is dropped after (the next message builds one from a fresh bundle again).
   */
  encryptFresh(recipientJid: string, message: proto.IMessage, bundle: PreKeyBundle, keepSession: boolean): Promise<Ciphertext> {
    return this.serial(async () => {
      await this.repository.deleteSession([recipientJid]);
      await this.repository.injectE2ESession({ jid: recipientJid, session: toE2ESession(bundle) });
      const encrypted = await this.repository.encryptMessage({ jid: recipientJid, data: encodeWAMessage(message) });
      if (!keepSession) await this.repository.deleteSession([recipientJid]);
      return encrypted;
    });
  }

  /** Sender-key encrypts for a group; returns the skmsg and the distribution message to send alongside. */
  encryptGroup(group: string, meId: string, message: proto.IMessage): Promise<{ ciphertext: Uint8Array; senderKeyDistributionMessage: Uint8Array }> {
    return this.serial(() => this.repository.encryptGroupMessage({ group, meId, data: encodeWAMessage(message) }));
  }

  /** Drops every session (the companions re-key with pkmsg). */
  forgetSessions(): void {
    for (const key of [...this.rows.keys()]) if (key.startsWith('session-') || key.startsWith('identity-key-')) this.rows.delete(key);
  }

  close(): void {
    this.repository.close?.();
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
