// The emulator's Noise certificate chain: a test root (clients trust its public key) → intermediate → server static key.
import { Curve, proto, type KeyPair } from '@whiskeysockets/baileys';
import { profile } from './profile.js';

export interface NoisePki {
  /** Clients must set `WA_CERT_DETAILS.PUBLIC_KEY` to `root.public` (see client-trust.ts). */
  root: KeyPair;
  intermediate: KeyPair;
  /** The server's static Noise key, certified by the leaf. */
  serverStatic: KeyPair;
  /** Encoded `proto.CertChain`, sent encrypted in the ServerHello payload. */
  certChain: Uint8Array;
}

const DAY = 86_400;

export function createNoisePki(now = Math.floor(Date.now() / 1000)): NoisePki {
  const root = Curve.generateKeyPair();
  const intermediate = Curve.generateKeyPair();
  const serverStatic = Curve.generateKeyPair();
  const Details = proto.CertChain.NoiseCertificate.Details;
  const intermediateDetails = Details.encode({
    serial: 1,
    issuerSerial: profile.noise.rootSerial,
    key: intermediate.public,
    notBefore: now - DAY,
    notAfter: now + 365 * DAY,
  }).finish();
  const leafDetails = Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: serverStatic.public,
    notBefore: now - DAY,
    notAfter: now + 30 * DAY,
  }).finish();
  const certChain = proto.CertChain.encode({
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
  }).finish();
  return { root, intermediate, serverStatic, certChain };
}
