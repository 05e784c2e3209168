// Linking companions, with the emulator acting as the primary phone: QR refs, QR scan, pairing code, pair-success, unlink, logout.
import {
  Curve,
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  jidDecode,
  proto,
  S_WHATSAPP_NET,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import type { Connection, Registration } from './connection.js';
import { aesCtr, gcmDecrypt, hkdf, hmacSha256, pbkdf2, random, readUintBE } from './crypto.js';
import { unixNow, type Hub } from './hub.js';
import { profile } from './profile.js';
import type { Account, Device } from './registry.js';

/** How the server ends the registering connection after pair-success: a 515 stream error, or a bare close. */
export type PairingRestart = 'stream-error' | 'socket';

interface PendingCode {
  connection: Connection;
  ref: string;
  wrappedCompanionEphemeral: Buffer;
  finish?: (stanza: BinaryNode) => void;
}

export class Pairing {
  /** QR ref → registering connection */
  private readonly refs = new Map<string, Connection>();
  /** phone → the companion that asked for a pairing code */
  private readonly codes = new Map<string, PendingCode>();
  private readonly codeWaiters = new Map<string, Array<() => void>>();

  constructor(private readonly hub: Hub) {}

  /** A client with no creds: remember its keys and hand it QR refs (`pair-device`). */
  register(connection: Connection, clientStatic: Buffer, data: proto.ClientPayload.IDevicePairingRegistrationData): void {
    const refs = Array.from({ length: profile.qrRefCount }, () => random(12).toString('base64'));
    const registration: Registration = {
      noiseKey: clientStatic,
      identityKey: Buffer.from(data.eIdent ?? []),
      registrationId: readUintBE(data.eRegid ?? undefined),
      signedPreKey: {
        keyId: readUintBE(data.eSkeyId ?? undefined),
        publicKey: Buffer.from(data.eSkeyVal ?? []),
        signature: Buffer.from(data.eSkeySig ?? []),
      },
      refs,
    };
    connection.registration = registration;
    for (const ref of refs) this.refs.set(ref, connection);
    const request: BinaryNode = {
      tag: 'iq',
      attrs: { from: S_WHATSAPP_NET, type: 'set', xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    };
    connection.query(request, this.hub.nextId()).catch((error: unknown) => this.hub.log('pair-device not acknowledged', String(error)));
  }

  forget(connection: Connection): void {
    for (const ref of connection.registration?.refs ?? []) this.refs.delete(ref);
    for (const [phone, pending] of this.codes) if (pending.connection === connection) this.codes.delete(phone);
  }

  /** The phone of `account` scans a QR string that Baileys emitted. */
  async scanQr(qr: string, account: Account): Promise<Device> {
    const parts = profile.parseQr(qr);
    const connection = this.refs.get(parts.ref);
    if (!connection?.registration || !connection.open) throw new Error('QR ref unknown or expired');
    if (!Buffer.from(parts.noiseKeyB64, 'base64').equals(connection.registration.noiseKey)) {
      throw new Error('noise key in the QR does not match the registering connection');
    }
    return this.pairSuccess(connection, account, {
      identityKey: Buffer.from(parts.identityKeyB64, 'base64'),
      advSecret: Buffer.from(parts.advSecretB64, 'base64'),
      platform: parts.platformId,
    });
  }

  /** `md` iqs of the link-code flow (`companion_hello`, `companion_finish`). */
  handleLinkCode(connection: Connection, request: BinaryNode, child: BinaryNode): void {
    const phone = jidDecode(child.attrs.jid)?.user;
    if (!phone) return this.hub.error(connection, request, 400, 'bad-request');
    if (child.attrs.stage === 'companion_hello') {
      const wrapped = getBinaryNodeChildBuffer(child, 'link_code_pairing_wrapped_companion_ephemeral_pub');
      if (!wrapped || wrapped.length < 80) return this.hub.error(connection, request, 400, 'bad-request');
      const ref = random(16).toString('hex');
      this.codes.set(phone, { connection, ref, wrappedCompanionEphemeral: Buffer.from(wrapped) });
      for (const wake of this.codeWaiters.get(phone) ?? []) wake();
      this.codeWaiters.delete(phone);
      return this.hub.result(connection, request, [
        { tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }] },
      ]);
    }
    if (child.attrs.stage === 'companion_finish') {
      this.hub.result(connection, request);
      this.codes.get(phone)?.finish?.(child);
      return;
    }
    this.hub.result(connection, request);
  }

  /**
   * The user types `code` on the phone of `account` (the companion must have called requestPairingCode for that number).
   * `restart` is how the server then makes the companion log in again: 515 (`stream-error`, the default) or a bare close.
   */
  async enterPairingCode(account: Account, rawCode: string, timeoutMs = 5_000, restart: PairingRestart = 'stream-error'): Promise<Device> {
    const pending = await this.waitForCodeRequest(account.phone, timeoutMs);
    const code = profile.pairingCode.normalise(rawCode);
    const iterations = profile.pairingCode.pbkdf2Iterations;
    const wrapped = pending.wrappedCompanionEphemeral;
    const companionEphemeral = aesCtr(pbkdf2(code, wrapped.subarray(0, 32), iterations), wrapped.subarray(32, 48), wrapped.subarray(48, 80));
    const primaryEphemeral = Curve.generateKeyPair();
    const salt = random(32);
    const iv = random(16);
    const wrappedPrimary = Buffer.concat([salt, iv, aesCtr(pbkdf2(code, salt, iterations), iv, primaryEphemeral.public)]);
    const finished = new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('companion did not finish the pairing-code flow')), timeoutMs);
      pending.finish = (stanza) => {
        clearTimeout(timer);
        resolve(stanza);
      };
    });
    pending.connection.send({
      tag: 'notification',
      attrs: { from: S_WHATSAPP_NET, type: 'link_code_companion_reg', id: this.hub.nextId(), t: unixNow() },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(pending.ref) },
            { tag: 'primary_identity_pub', attrs: {}, content: account.primary.identity.public },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary },
          ],
        },
      ],
    });
    const finish = await finished;
    const bundle = getBinaryNodeChildBuffer(finish, 'link_code_pairing_wrapped_key_bundle');
    if (!bundle) throw new Error('companion_finish without a key bundle');
    const shared = Curve.sharedKey(primaryEphemeral.private, companionEphemeral);
    const key = hkdf(shared, 32, bundle.subarray(0, 32), profile.pairingCode.bundleKeyInfo);
    let plain: Buffer;
    try {
      plain = gcmDecrypt(key, bundle.subarray(32, 44), Buffer.alloc(0), bundle.subarray(44));
    } catch {
      this.codes.delete(account.phone);
      throw new Error('wrong pairing code');
    }
    const companionIdentity = plain.subarray(0, 32);
    if (!plain.subarray(32, 64).equals(Buffer.from(account.primary.identity.public))) throw new Error('companion echoed a wrong primary identity');
    const identityShared = Curve.sharedKey(account.primary.identity.private, companionIdentity);
    const advSecret = hkdf(Buffer.concat([shared, identityShared, plain.subarray(64, 96)]), 32, Buffer.alloc(0), profile.pairingCode.advSecretInfo);
    this.codes.delete(account.phone);
    return this.pairSuccess(pending.connection, account, { identityKey: companionIdentity, advSecret, platform: 'code' }, restart);
  }

  /** The phone removes a companion ("Linked devices → Log out"): 401 device_removed if it is connected. */
  unlink(device: Device): void {
    this.hub.registry.remove(device);
    this.hub.forgetQueues(device);
    this.hub.online.get(device.jid)?.close(profile.closeStanza(401, 'stream-error'));
    this.hub.notifyDevicesChanged(device.account, device);
  }

  /** `remove-companion-device` from the companion itself (sock.logout()). */
  logout(connection: Connection, request: BinaryNode, child: BinaryNode): void {
    const device = this.hub.registry.device(child.attrs.jid ?? '') ?? connection.device;
    this.hub.result(connection, request);
    if (!device || device.virtual) return;
    this.hub.registry.remove(device);
    this.hub.forgetQueues(device);
    connection.close(undefined);
    this.hub.notifyDevicesChanged(device.account, device);
  }

  private async pairSuccess(
    connection: Connection,
    account: Account,
    companion: { identityKey: Buffer; advSecret: Buffer; platform: string },
    restart: PairingRestart = 'stream-error',
  ): Promise<Device> {
    const registration = connection.registration;
    if (!registration) throw new Error('connection is not registering');
    const deviceId = account.nextDeviceId++;
    const identity = account.primary.identity;
    const details = proto.ADVDeviceIdentity.encode({
      rawId: Number.parseInt(random(4).toString('hex'), 16) >>> 1,
      timestamp: Math.floor(Date.now() / 1000),
      keyIndex: deviceId,
      accountType: proto.ADVEncryptionType.E2EE,
      deviceType: proto.ADVEncryptionType.E2EE,
    }).finish();
    const accountSignature = Curve.sign(identity.private, Buffer.concat([profile.adv.accountSignaturePrefix, details, companion.identityKey]));
    const signed = proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey: identity.public, accountSignature }).finish();
    const wrapped = proto.ADVSignedDeviceIdentityHMAC.encode({
      details: signed,
      hmac: hmacSha256(companion.advSecret, signed),
      accountType: proto.ADVEncryptionType.E2EE,
    }).finish();
    const jid = `${account.phone}:${deviceId}@s.whatsapp.net`;
    const lid = `${account.lidUser}:${deviceId}@lid`;
    const success: BinaryNode[] = [
      { tag: 'device-identity', attrs: { 'key-index': String(deviceId) }, content: wrapped },
      { tag: 'platform', attrs: { name: profile.phonePlatform(account.business) } },
      { tag: 'device', attrs: { jid, lid } },
    ];
    if (account.business || profile.pushNameInPairSuccess) success.push({ tag: 'biz', attrs: { name: account.pushName } });
    const answer = await connection.query(
      { tag: 'iq', attrs: { from: S_WHATSAPP_NET, type: 'set', xmlns: 'md', t: unixNow() }, content: [{ tag: 'pair-success', attrs: {}, content: success }] },
      this.hub.nextId(),
    );
    const signedByCompanion = getBinaryNodeChild(getBinaryNodeChild(answer, 'pair-device-sign'), 'device-identity')?.content;
    if (!(signedByCompanion instanceof Uint8Array)) throw new Error('companion rejected pair-success');
    const fromCompanion = proto.ADVSignedDeviceIdentity.decode(signedByCompanion);
    const deviceMessage = Buffer.concat([profile.adv.deviceSignaturePrefix, fromCompanion.details ?? Buffer.alloc(0), companion.identityKey, identity.public]);
    if (!fromCompanion.deviceSignature || !Curve.verify(companion.identityKey, deviceMessage, fromCompanion.deviceSignature)) {
      throw new Error('bad device signature from companion');
    }
    const device = this.hub.registry.addCompanion({
      account,
      deviceId,
      virtual: false,
      noiseKey: registration.noiseKey,
      identityKey: companion.identityKey,
      registrationId: registration.registrationId,
      signedPreKey: registration.signedPreKey,
      preKeys: new Map(),
      deviceIdentity: Buffer.from(signedByCompanion),
      platform: companion.platform,
    });
    this.forget(connection);
    connection.registration = undefined;
    // the real server then forces a reconnect, which logs in with the new creds
    connection.close(restart === 'stream-error' ? { tag: 'stream:error', attrs: { code: String(profile.restartAfterPairing) } } : undefined);
    this.hub.notifyDevicesChanged(account, device);
    return device;
  }

  private waitForCodeRequest(phone: string, timeoutMs: number): Promise<PendingCode> {
    const ready = this.codes.get(phone);
    if (ready) return Promise.resolve(ready);
    return new Promise<PendingCode>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no companion asked for a pairing code for ${phone}`)), timeoutMs);
      const waiters = this.codeWaiters.get(phone) ?? [];
      waiters.push(() => {
        clearTimeout(timer);
        resolve(this.codes.get(phone)!);
      });
      this.codeWaiters.set(phone, waiters);
    });
  }
}
