// Client side: make this process's Baileys trust the emulator (Noise root key) and its media host (TLS certificate).
import { Agent as HttpsAgent, globalAgent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { DEFAULT_CONNECTION_CONFIG, WA_CERT_DETAILS } from '@whiskeysockets/baileys';

const asKey = (publicKey: Uint8Array | string): Buffer<ArrayBuffer> => {
  const key = typeof publicKey === 'string' ? Buffer.from(publicKey.trim(), 'hex') : publicKey;
  if (key.length !== 32) throw new Error(`emulator CA public key must be 32 bytes, got ${key.length}`);
  const out = Buffer.alloc(32);
  out.set(key);
  return out;
};

/** Sets Baileys' `WA_CERT_DETAILS.PUBLIC_KEY`, so the Noise handshake accepts the emulator's certificate chain. */
export function trustEmulatorCa(publicKey: Uint8Array | string): void {
  WA_CERT_DETAILS.PUBLIC_KEY = asKey(publicKey);
}

/** Makes sockets created without `waWebSocketUrl` connect to the emulator. */
export function useEmulatorUrl(wsUrl: string): void {
  DEFAULT_CONNECTION_CONFIG.waWebSocketUrl = wsUrl;
}

/** An https.Agent that trusts the media host; pass it as makeWASocket's `fetchAgent` (uploads). */
export function emulatorHttpsAgent(certPem: string): HttpsAgent {
  return new HttpsAgent({ ca: [...rootCertificates, certPem], keepAlive: false });
}

/**
 * Trusts the media host process-wide: https.globalAgent (Baileys uploads) and the global fetch dispatcher
 * (downloads). In a child process prefer NODE_EXTRA_CA_CERTS, which covers both at startup.
 */
export async function trustEmulatorMedia(certPem: string): Promise<void> {
  const ca = [...rootCertificates, certPem];
  globalAgent.options.ca = ca;
  const { Agent, setGlobalDispatcher } = await import('undici');
  setGlobalDispatcher(new Agent({ connect: { ca }, keepAliveTimeout: 1_000 }));
}

/** Both of the above for an emulator in this process. */
export async function trustEmulator(emulator: { caPublicKey: Uint8Array; tlsCert: string }): Promise<void> {
  trustEmulatorCa(emulator.caPublicKey);
  await trustEmulatorMedia(emulator.tlsCert);
}
