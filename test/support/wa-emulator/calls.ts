// Calls: a contact's phone offers a call to an account's companions, ends it (rings out, or the caller hangs up), and
// the server takes a companion's reject (Baileys' rejectCall), acks it, and tells the caller's side.
import { randomBytes } from 'node:crypto';
import { getBinaryNodeChild, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import { unixNow, type Hub } from './hub.js';
import type { Account } from './registry.js';

/** How the offer names its caller: by LID with `caller_pn` (what WhatsApp sends LID-migrated accounts), or by phone. */
export type CallAddressing = 'lid' | 'pn';

export interface CallRecord {
  callId: string;
  /** caller and callee phones (digits) */
  from: string;
  to: string;
  isVideo: boolean;
  addressing: CallAddressing;
  /** ms since the epoch */
  offeredAt: number;
  /** as the caller's phone shows it */
  status: 'ringing' | 'rejected' | 'timeout' | 'cancelled';
  /** the companion whose reject reached the caller (its device jid) */
  rejectedBy?: string;
  /** the reject stanza as the companion sent it */
  reject?: { to: string; callCreator: string; count?: string };
}

export class Calls {
  private readonly calls = new Map<string, CallRecord>();
  private readonly waiters = new Set<{ callId: string; resolve: (call: CallRecord) => void }>();

  constructor(private readonly hub: Hub) {}

  get(callId: string): CallRecord | undefined {
    const call = this.calls.get(callId);
    return call ? { ...call } : undefined;
  }

  list(): CallRecord[] {
    return [...this.calls.values()].map((c) => ({ ...c }));
  }

  /** The phone of `from` calls `to`: every companion of `to` gets the `<call><offer/></call>` stanza (queued when offline). */
  offer(from: Account, to: Account, options: { callId?: string; isVideo?: boolean; addressing?: CallAddressing } = {}): CallRecord {
    const callId = options.callId ?? randomBytes(16).toString('hex').toUpperCase();
    if (this.calls.has(callId)) throw new Error(`call ${callId} exists`);
    const addressing = options.addressing ?? 'lid';
    const call: CallRecord = { callId, from: from.phone, to: to.phone, isVideo: options.isVideo ?? false, addressing, offeredAt: Date.now(), status: 'ringing' };
    this.calls.set(callId, call);
    const caller = addressing === 'lid' ? from.lidJid : from.pnJid;
    const offer: BinaryNode = {
      tag: 'offer',
      attrs: { 'call-id': callId, 'call-creator': caller, ...(addressing === 'lid' ? { caller_pn: from.pnJid } : {}) },
      content: [
        { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
        { tag: 'audio', attrs: { enc: 'opus', rate: '8000' } },
        ...(call.isVideo ? [{ tag: 'video', attrs: { enc: 'vp8', dec: 'vp8', orientation: '0', screen_width: '1920', screen_height: '1080', device_orientation: '0' } }] : []),
        { tag: 'net', attrs: { medium: '3' } },
        { tag: 'encopt', attrs: { keygen: '2' } },
      ],
    };
    this.toCompanions(to, caller, offer, from.pushName);
    return { ...call };
  }

  /**
   * The call stops ringing without an answer: it rang out (`timeout`: `<terminate reason="timeout">`, Baileys' status
   * `timeout`) or its caller hung up (`cancelled`: a bare `<terminate>`, Baileys' status `terminate`).
   */
  end(callId: string, how: 'timeout' | 'cancelled'): CallRecord {
    const call = this.calls.get(callId);
    if (!call) throw new Error(`no call ${callId}`);
    if (call.status !== 'ringing') throw new Error(`call ${callId} is ${call.status}`);
    call.status = how;
    const from = this.hub.registry.account(call.from)!;
    const caller = call.addressing === 'lid' ? from.lidJid : from.pnJid;
    const terminate: BinaryNode = { tag: 'terminate', attrs: { 'call-id': callId, 'call-creator': caller, ...(how === 'timeout' ? { reason: 'timeout' } : {}) } };
    this.toCompanions(this.hub.registry.account(call.to)!, caller, terminate);
    return { ...call };
  }

  /**
   * A `<call>` stanza from a companion. A `<reject>` of a call that rings ends it for the caller (recorded), and the
   * server acks it (`<ack class="call" type="reject">`, which Baileys' rejectCall query waits for); so does any other.
   */
  handle(connection: Connection, node: BinaryNode): void {
    const reject = getBinaryNodeChild(node, 'reject');
    const device = connection.device;
    connection.send({ tag: 'ack', attrs: { id: node.attrs.id ?? this.hub.nextId(), class: 'call', ...(reject ? { type: 'reject' } : {}), from: node.attrs.to ?? '' } });
    if (!reject || !device) return;
    const call = this.calls.get(reject.attrs['call-id'] ?? '');
    if (!call || call.status !== 'ringing' || call.to !== device.account.phone) return;
    call.status = 'rejected';
    call.rejectedBy = device.jid;
    call.reject = { to: node.attrs.to ?? '', callCreator: reject.attrs['call-creator'] ?? '', ...(reject.attrs.count !== undefined ? { count: reject.attrs.count } : {}) };
    this.hub.log('call rejected', { callId: call.callId, by: device.jid });
    for (const waiter of [...this.waiters]) {
      if (waiter.callId !== call.callId) continue;
      this.waiters.delete(waiter);
      waiter.resolve({ ...call });
    }
  }

  /** Resolves once a companion's reject of `callId` reached the caller. */
  waitForReject(callId: string, timeoutMs = 5_000): Promise<CallRecord> {
    const call = this.calls.get(callId);
    if (call?.status === 'rejected') return Promise.resolve({ ...call });
    return new Promise((resolve, reject) => {
      const waiter = {
        callId,
        resolve: (done: CallRecord) => {
          clearTimeout(timer);
          resolve(done);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`call ${callId} was not rejected within ${timeoutMs} ms (status ${this.calls.get(callId)?.status ?? 'unknown'})`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private toCompanions(to: Account, caller: string, child: BinaryNode, notify?: string): void {
    for (const device of this.hub.registry.companions(to)) {
      this.hub.deliver(device, {
        tag: 'call',
        attrs: { from: caller, id: this.hub.nextId(), t: unixNow(), ...(notify ? { notify } : {}) },
        content: [child],
      });
    }
  }
}
