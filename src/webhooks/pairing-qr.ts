// A session.qr event's QR carries the pairing's secret (Baileys' adv secret key). Its webhook deliveries keep the QR
// sealed at rest, in the outbox and the fan-outs alike, and open it only to send. A QR that can no longer be opened
// (the data key was rotated since) is sent as null: it expired long before.
import { SecretBoxError, type SecretBox } from '../auth/secret-box.js';

const CONTEXT = 'webhooks/session.qr';

/** the payload as its deliveries store it: the QR sealed */
export function sealedQrPayload(box: SecretBox, payload: Record<string, unknown>): Record<string, unknown> {
  return typeof payload.qr === 'string' ? { ...payload, qr: box.seal(payload.qr, CONTEXT) } : payload;
}

/** a stored delivery body of a session.qr event, with its QR opened to be sent */
export function openedQrBody(box: SecretBox, body: string): string {
  const envelope = JSON.parse(body) as { payload?: { qr?: unknown } };
  const sealed = envelope.payload?.qr;
  if (typeof sealed !== 'string') return body;
  try {
    envelope.payload!.qr = box.open(sealed, CONTEXT);
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    envelope.payload!.qr = null;
  }
  return JSON.stringify(envelope);
}
