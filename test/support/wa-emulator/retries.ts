// Retry receipts between virtual phones and companions, both ways: a phone answers a companion's retry receipt by
// re-sending the message on a fresh session (or, as a fault, ignores it), and a phone made to fail decrypting a
// companion's message asks for it again with retry receipts until the planned number is spent.
import { getBinaryNodeChild, type BinaryNode, type proto } from '@whiskeysockets/baileys';
import { uintBE } from './crypto.js';
import { encNode } from './enc.js';
import { unixNow, type Hub } from './hub.js';
import type { AddressingMode } from './profile.js';
import type { Account, Device } from './registry.js';

/** A 1:1 message a phone sent to companions, kept to answer their retry receipts. */
interface SentDirect {
  from: Account;
  message: proto.IMessage;
  /** the attributes of the stanza as the companions got it */
  attrs: Record<string, string>;
  /** a fault: retry receipts for it are never answered */
  ignoreRetries: boolean;
}

/** A phone that fails to decrypt the next message a companion sends it, `retries` times (one retry receipt each). */
interface FailPlan {
  retries: number;
  asked: number;
  /** the message it applies to, once one arrived */
  id?: string;
}

export interface RetryRecord {
  /** the phone */
  phone: string;
  id: string;
  /** the companion that asked (`answered`/`ignored`) or was asked (`asked`) */
  device: string;
  /** `asked`: the phone sent a retry receipt; `answered`: it re-sent its message for one; `ignored`: it did not */
  kind: 'asked' | 'answered' | 'ignored';
  count: number;
  at: number;
}

/** How many sent messages each emulator remembers for retries (WhatsApp phones keep a recent window). */
const MAX_SENT = 2_000;

export class Retries {
  private readonly sent = new Map<string, SentDirect>();
  private readonly plans = new Map<Account, FailPlan>();
  readonly log: RetryRecord[] = [];

  constructor(private readonly hub: Hub) {}

  /** A phone sent a 1:1 message: kept for retry receipts. */
  remember(id: string, sent: SentDirect): void {
    if (this.sent.size >= MAX_SENT) this.sent.delete(this.sent.keys().next().value!);
    this.sent.set(id, sent);
  }

  /**
   * A companion's retry receipt for a message of `phone`: the phone re-sends it to that device on a new session (built
   * from a fresh bundle of the device), marked with the receipt's count; unless it ignores retries for that message.
   */
  async answer(phone: Account, requester: Device, receipt: BinaryNode): Promise<void> {
    const id = receipt.attrs.id ?? '';
    const count = Number(getBinaryNodeChild(receipt, 'retry')?.attrs.count ?? 1);
    const sent = this.sent.get(id);
    if (!sent || sent.from !== phone) return;
    const record = { phone: phone.phone, id, device: requester.jid, count, at: Date.now() };
    if (sent.ignoreRetries) {
      this.log.push({ ...record, kind: 'ignored' });
      return;
    }
    const encrypted = await phone.primary.encryptFresh(requester.lid, sent.message, this.hub.registry.takeBundle(requester), true);
    this.hub.deliver(requester, { tag: 'message', attrs: { ...sent.attrs }, content: [encNode(encrypted.type, encrypted.ciphertext, sent.message, count)] });
    this.log.push({ ...record, kind: 'answered' });
  }

  /** `phone` fails to decrypt the next message a companion sends it, and asks for it again `retries` times. */
  failNext(phone: Account, retries: number): void {
    this.plans.set(phone, { retries, asked: 0 });
  }

  /**
   * A message of `sender` reached `phone` (decrypted): true when the phone's plan makes it fail, in which case the phone
   * sent the companion a retry receipt instead of accepting it. The plan ends once its retries are spent: the next copy
   * of that message is accepted.
   */
  askAgain(phone: Account, sender: Device, id: string, mode: AddressingMode): boolean {
    const plan = this.plans.get(phone);
    if (!plan || (plan.id !== undefined && plan.id !== id)) return false;
    plan.id = id;
    if (plan.asked >= plan.retries) {
      this.plans.delete(phone);
      return false;
    }
    plan.asked += 1;
    this.request(phone, sender, id, mode, plan.asked);
    return true;
  }

  /** `phone` sends companion `device` a retry receipt for its message `id` (the `count`-th for it). */
  request(phone: Account, device: Device, id: string, mode: AddressingMode, count: number): void {
    const t = unixNow();
    this.hub.deliver(device, {
      tag: 'receipt',
      attrs: { from: this.hub.registry.userJid(phone, mode), id, type: 'retry', t },
      content: [
        { tag: 'retry', attrs: { count: String(count), id, t, v: '1' } },
        { tag: 'registration', attrs: {}, content: uintBE(phone.primary.creds.registrationId, 4) },
      ],
    });
    this.log.push({ phone: phone.phone, id, device: device.jid, kind: 'asked', count, at: Date.now() });
  }
}
