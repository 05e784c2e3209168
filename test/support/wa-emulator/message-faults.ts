// The server's answer to a companion's message, made to fail on demand: a refusal (`<ack class="message" error="…">`,
// as WhatsApp answers 463 or 429) or no ack at all; either way the message is not routed. Withheld messages can be
// released later (acked and routed then), as a late ack from a slow server.
import { jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import type { Registry } from './registry.js';

export type MessageFault = { kind: 'nack'; code: string } | { kind: 'withhold' };

interface Armed {
  fault: MessageFault;
  /** the sending account's phone; any when absent */
  from?: string;
  /** the recipient's account phone (a PN or LID `to` of it matches), or a group jid; any when absent */
  to?: string;
  remaining: number;
}

/** what `release` needs to answer and route a withheld message */
export interface Withheld {
  connection: Connection;
  node: BinaryNode;
}

/** the most faults armed and messages withheld at once */
const MAX_ARMED = 100;
const MAX_WITHHELD = 1_000;

export class MessageFaults {
  private armed: Armed[] = [];
  readonly withheld: Withheld[] = [];

  constructor(private readonly registry: Registry) {}

  /** The next `count` messages from `from` to `to` (each any when absent) meet `fault`. */
  arm(fault: MessageFault, options: { from?: string; to?: string; count?: number } = {}): void {
    if (fault.kind === 'nack' && !/^\d{3}$/.test(fault.code)) throw new Error('a nack code is three digits');
    if (this.armed.length >= MAX_ARMED) throw new Error(`at most ${MAX_ARMED} message faults at once`);
    this.armed.push({ fault, ...this.targets(options), remaining: Math.max(1, Math.min(1000, options.count ?? 1)) });
  }

  clear(): void {
    this.armed = [];
    this.withheld.length = 0;
  }

  /** The fault the message `node` of `fromPhone` meets, counted down; undefined when none is armed for it. */
  take(fromPhone: string, node: BinaryNode): MessageFault | undefined {
    const to = node.attrs.to ?? '';
    const toPhone = jidDecode(to)?.server === 'g.us' ? to : this.registry.account(to)?.phone;
    const armed = this.armed.find((a) => (a.from === undefined || a.from === fromPhone) && (a.to === undefined || a.to === toPhone));
    if (!armed) return undefined;
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.armed = this.armed.filter((a) => a !== armed);
    return armed.fault;
  }

  withhold(entry: Withheld): void {
    if (this.withheld.length >= MAX_WITHHELD) this.withheld.shift();
    this.withheld.push(entry);
  }

  private targets(options: { from?: string; to?: string }): { from?: string; to?: string } {
    const account = (value: string) => {
      const found = this.registry.account(value);
      if (!found) throw new Error(`no account ${value}`);
      return found.phone;
    };
    return {
      ...(options.from ? { from: account(options.from) } : {}),
      ...(options.to ? { to: jidDecode(options.to)?.server === 'g.us' ? options.to : account(options.to) } : {}),
    };
  }
}
