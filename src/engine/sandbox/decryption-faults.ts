// Decryption faults of the simulated network (the sandbox's fault routes): an incoming message that does not decrypt,
// and recipients that cannot decrypt a sent message and ask for it again. They move the same counters and produce the
// same events and states as the Baileys engine does on the real network.
import { isoTimestamp } from '../../timestamp.js';
import { RETRY_EXHAUSTED, UndecryptableWatch, type DecryptionFailureKind, type DecryptionSignal } from '../decryption.js';
import type { EventType } from '../../events/catalogue.js';
import type { JidRef } from '../jid.js';
import { failedPayload } from '../server-acks.js';

/**
 * How many times a message is re-sent to a recipient that asks for it again, as Baileys rc14 does (its retry counter
 * for a sent message, maxMsgRetryCount 5, grows by 2 for each retry receipt it answers); the next retry receipt fails it.
 */
export const MAX_RESENDS = 2;
/** How long a virtual contact takes to answer the session's retry receipt with a decryptable copy. */
const RESEND_DELAY_MS = 20;
/** Armed retry plans a session may hold at once. */
const MAX_PLANS = 100;

interface RetryPlan {
  /** the chat the next sent message must go to; undefined: any chat */
  chatId: string | undefined;
  count: number;
}

export interface FaultHooks {
  signal(signal: DecryptionSignal): void;
  deliver(type: EventType, payload: Record<string, unknown>): void;
}

export class SandboxDecryptionFaults {
  readonly watch: UndecryptableWatch;
  private plans: RetryPlan[] = [];

  constructor(
    giveUpMs: number,
    private readonly hooks: FaultHooks,
  ) {
    this.watch = new UndecryptableWatch(giveUpMs, { signal: hooks.signal, undecryptable: (payload) => hooks.deliver('message.undecryptable', payload) });
  }

  /**
   * A message from `sender` did not decrypt (kind `kind`): the session asks the sender again with a retry receipt.
   * `recover` delivers the decrypted copy the sender answers with; without it the sender never answers, and the
   * message is reported as message.undecryptable after engine.decryption.undecryptableAfterSeconds.
   */
  undecryptable(message: { messageId: string; chatId: string; sender: JidRef; kind: DecryptionFailureKind }, recover?: () => void): void {
    this.watch.failed(message);
    this.watch.retried(message.messageId);
    if (!recover) return;
    setTimeout(() => {
      if (!this.watch.isWatched(message.messageId)) return;
      this.watch.recovered(message.messageId);
      recover();
    }, RESEND_DELAY_MS).unref();
  }

  /** The next message sent (to `chatId`, or to any chat) is asked for again `count` times by its recipient. */
  arm(chatId: string | undefined, count: number): void {
    if (this.plans.length >= MAX_PLANS) this.plans.shift();
    this.plans.push({ chatId, count });
  }

  /**
   * A message is being sent to `chatId`: under an armed plan its recipient fails to decrypt the first `count` copies it
   * gets, asking again for each. Up to MAX_RESENDS copies are re-sent: if one is left to decrypt, `deliver` runs (it
   * arrives); otherwise the last retry receipt is refused, the message fails and `deliver` never runs. Without a plan
   * `deliver` runs at once.
   */
  sending(messageId: string, chatId: string, deliver: () => void): void {
    const index = this.plans.findIndex((plan) => plan.chatId === undefined || plan.chatId === chatId);
    if (index < 0) return deliver();
    const [plan] = this.plans.splice(index, 1);
    const asks = Math.min(plan!.count, MAX_RESENDS + 1);
    for (let asked = 1; asked <= asks; asked++) this.hooks.signal({ kind: 'retry_receipt', direction: 'received' });
    if (plan!.count <= MAX_RESENDS) return deliver();
    this.hooks.signal({ kind: 'exhausted', direction: 'outgoing' });
    this.hooks.deliver('message.failed', failedPayload(messageId, chatId, { reason: RETRY_EXHAUSTED, detail: `the recipient asked for it again ${asks} times; it was re-sent ${MAX_RESENDS} times` }));
  }

  close(): void {
    this.watch.close();
    this.plans = [];
  }
}
