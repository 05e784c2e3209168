// The network's refusals the sandbox plays on demand (sandbox routes …/faults): the next sends, to one chat or any, are
// refused with an ack error code, or never acked (and not delivered) until they are released.

/** how the network answers a send: refused with a code (WhatsApp's ack error), or no ack at all */
export type SendFault = { kind: 'nack'; code: string } | { kind: 'no-ack' };

interface Armed {
  fault: SendFault;
  /** the chat it applies to; any when absent */
  chatId?: string;
  remaining: number;
}

/** the most faults armed, and messages withheld, at once per session */
export const MAX_ARMED_FAULTS = 100;
const MAX_WITHHELD = 1_000;

export class SendFaults {
  private armed: Armed[] = [];
  /** what acks and delivers each withheld message, oldest first */
  private withheld: Array<() => void> = [];

  /** The next `count` sends to `chatId` (any chat when absent) meet `fault`; false when too many are armed already. */
  arm(fault: SendFault, chatId: string | undefined, count: number): boolean {
    if (this.armed.length >= MAX_ARMED_FAULTS) return false;
    this.armed.push({ fault, ...(chatId ? { chatId } : {}), remaining: count });
    return true;
  }

  /** The fault a send to a chat (named by any of `chatIds`) meets, counted down. */
  take(chatIds: readonly string[]): SendFault | undefined {
    const armed = this.armed.find((a) => a.chatId === undefined || chatIds.includes(a.chatId));
    if (!armed) return undefined;
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.armed = this.armed.filter((a) => a !== armed);
    return armed.fault;
  }

  withhold(release: () => void): void {
    if (this.withheld.length >= MAX_WITHHELD) this.withheld.shift();
    this.withheld.push(release);
  }

  /** The withheld messages get their ack and are delivered now (a late ack); returns how many. */
  release(): number {
    const released = this.withheld.splice(0);
    for (const deliver of released) deliver();
    return released.length;
  }

  /** Disarms every fault and forgets the withheld messages (they are never acked). */
  clear(): void {
    this.armed = [];
    this.withheld = [];
  }
}
