// Server side of WA's Noise XX handshake and transport, mirroring Baileys' noise-handler state machine, plus frame parsing.
import { Curve, proto, type KeyPair } from '@whiskeysockets/baileys';
import { counterIv, gcmDecrypt, gcmEncrypt, hkdf, sha256 } from './crypto.js';
import type { NoisePki } from './pki.js';
import { profile } from './profile.js';

const EMPTY = Buffer.alloc(0);

/** Splits the client byte stream into frames: an optional `ED` routing intro, the WA header, then 3-byte length-prefixed frames. */
export class FrameDecoder {
  private buffer = EMPTY;
  private sawIntro = false;

  /** Returns the complete frames in `data` (plus what was buffered); throws on a bad header. */
  push(data: Uint8Array): Buffer[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : Buffer.from(data);
    if (!this.sawIntro) {
      if (this.buffer.length < 4) return [];
      if (this.buffer.subarray(0, 2).toString('latin1') === 'ED') {
        if (this.buffer.length < 7) return [];
        const routingLength = (this.buffer[4]! << 16) | this.buffer.readUInt16BE(5);
        if (this.buffer.length < 7 + routingLength + 4) return [];
        this.buffer = this.buffer.subarray(7 + routingLength);
      }
      if (!this.buffer.subarray(0, 4).equals(profile.noise.header)) throw new Error('bad WA connection header');
      this.buffer = this.buffer.subarray(4);
      this.sawIntro = true;
    }
    const frames: Buffer[] = [];
    while (this.buffer.length >= 3) {
      const size = this.buffer.readUIntBE(0, 3);
      if (this.buffer.length < size + 3) break;
      frames.push(this.buffer.subarray(3, size + 3));
      this.buffer = this.buffer.subarray(size + 3);
    }
    return frames;
  }
}

export const encodeFrame = (payload: Uint8Array): Buffer => {
  const frame = Buffer.alloc(3 + payload.length);
  frame.writeUIntBE(payload.length, 0, 3);
  frame.set(payload, 3);
  return frame;
};

export interface HandshakeResult {
  /** the client's static Noise key (its `creds.noiseKey.public`) */
  clientStatic: Buffer;
  payload: proto.ClientPayload;
}

/** One connection's Noise state: handshake first, then the transport keys. */
export class ServerNoise {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private ephemeral: KeyPair | undefined;
  private transport: { readKey: Buffer; writeKey: Buffer; readCounter: number; writeCounter: number } | undefined;

  constructor(private readonly pki: NoisePki) {
    const mode = Buffer.from(profile.noise.mode);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.authenticate(profile.noise.header);
  }

  get established(): boolean {
    return this.transport !== undefined;
  }

  /** Handles the ClientHello frame and returns the ServerHello frame payload. */
  serverHello(frame: Uint8Array): Buffer {
    const { clientHello } = proto.HandshakeMessage.decode(frame);
    if (!clientHello?.ephemeral) throw new Error('handshake: missing client ephemeral');
    const clientEphemeral = Buffer.from(clientHello.ephemeral);
    this.authenticate(clientEphemeral);
    const ephemeral = Curve.generateKeyPair();
    this.ephemeral = ephemeral;
    this.authenticate(ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(ephemeral.private, clientEphemeral));
    const encryptedStatic = this.encrypt(this.pki.serverStatic.public);
    this.mixIntoKey(Curve.sharedKey(this.pki.serverStatic.private, clientEphemeral));
    const encryptedPayload = this.encrypt(this.pki.certChain);
    return Buffer.from(
      proto.HandshakeMessage.encode({
        serverHello: { ephemeral: ephemeral.public, static: encryptedStatic, payload: encryptedPayload },
      }).finish(),
    );
  }

  /** Handles the ClientFinish frame, switches to transport keys and returns the decrypted ClientPayload. */
  clientFinish(frame: Uint8Array): HandshakeResult {
    const { clientFinish } = proto.HandshakeMessage.decode(frame);
    if (!clientFinish?.static || !clientFinish.payload || !this.ephemeral) throw new Error('handshake: bad ClientFinish');
    const clientStatic = this.decrypt(clientFinish.static);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStatic));
    const payload = proto.ClientPayload.decode(this.decrypt(clientFinish.payload));
    const keys = hkdf(EMPTY, 64, this.salt);
    // the client writes with the first half and reads with the second
    this.transport = { readKey: keys.subarray(0, 32), writeKey: keys.subarray(32), readCounter: 0, writeCounter: 0 };
    return { clientStatic, payload };
  }

  encryptTransport(plaintext: Uint8Array): Buffer {
    if (!this.transport) throw new Error('noise transport not ready');
    return gcmEncrypt(this.transport.writeKey, counterIv(this.transport.writeCounter++), EMPTY, plaintext);
  }

  decryptTransport(ciphertext: Uint8Array): Buffer {
    if (!this.transport) throw new Error('noise transport not ready');
    return gcmDecrypt(this.transport.readKey, counterIv(this.transport.readCounter++), EMPTY, ciphertext);
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  private mixIntoKey(data: Uint8Array): void {
    const keys = hkdf(data, 64, this.salt);
    this.salt = keys.subarray(0, 32);
    this.key = keys.subarray(32);
    this.counter = 0;
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const result = gcmEncrypt(this.key, counterIv(this.counter++), this.hash, plaintext);
    this.authenticate(result);
    return result;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const result = gcmDecrypt(this.key, counterIv(this.counter++), this.hash, ciphertext);
    this.authenticate(ciphertext);
    return result;
  }
}
