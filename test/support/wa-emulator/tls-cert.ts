// A throwaway self-signed X.509 certificate (ECDSA P-256, SAN 127.0.0.1 + localhost) for the media host, built at runtime.
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

export interface TlsIdentity {
  /** PEM certificate; trust it as a CA (NODE_EXTRA_CA_CERTS or client-trust.ts) */
  cert: string;
  /** PEM PKCS#8 private key */
  key: string;
}

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
};
const tlv = (tag: number, body: Uint8Array): Buffer => Buffer.concat([Buffer.from([tag]), length(body.length), body]);
const seq = (...items: Uint8Array[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Uint8Array[]): Buffer => tlv(0x31, Buffer.concat(items));
const octets = (body: Uint8Array): Buffer => tlv(0x04, body);
const bits = (body: Uint8Array): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), body]));
const bool = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0]));
const explicit = (n: number, body: Uint8Array): Buffer => tlv(0xa0 + n, body);
/** DER INTEGER: minimal two's-complement encoding of an unsigned big-endian value. */
const integer = (value: Uint8Array): Buffer => {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  const body = Buffer.from(value.subarray(start));
  return tlv(0x02, body[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);
};
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

const utcTime = (date: Date): Buffer => {
  const s = date.toISOString(); // 2025-01-02T03:04:05.678Z
  return tlv(0x17, Buffer.from(`${s.slice(2, 4)}${s.slice(5, 7)}${s.slice(8, 10)}${s.slice(11, 13)}${s.slice(14, 16)}${s.slice(17, 19)}Z`));
};

const ECDSA_SHA256 = '1.2.840.10045.4.3.2';

/** Creates a self-signed certificate valid for `days` (default 30) for 127.0.0.1 and localhost. */
export function createTlsIdentity(commonName = 'wa-emulator media', days = 30): TlsIdentity {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = seq(set(seq(oid('2.5.4.3'), utf8(commonName))));
  const now = Date.now();
  const serial = randomBytes(16);
  const subjectAltName = seq(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from('localhost')));
  const extensions = seq(
    seq(oid('2.5.29.19'), bool(true), octets(seq(bool(true)))), // basicConstraints: critical, CA:TRUE
    seq(oid('2.5.29.17'), octets(subjectAltName)),
  );
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    seq(oid(ECDSA_SHA256)),
    name,
    seq(utcTime(new Date(now - 86_400_000)), utcTime(new Date(now + days * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = seq(tbs, seq(oid(ECDSA_SHA256)), bits(signature));
  const base64 = der.toString('base64').replace(/.{1,64}/g, (line) => `${line}\n`);
  const cert = `-----BEGIN CERTIFICATE-----\n${base64}-----END CERTIFICATE-----\n`;
  new X509Certificate(cert); // throws if the encoding is wrong
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
