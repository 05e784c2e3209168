// Shared server state: who is online, per-device offline queues, stanzas awaiting the device's confirmation, stanza ids,
// and reply helpers used by every handler.
import { randomBytes } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren, S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import type { EmulatorLog } from './log.js';
import type { StanzaRecorder } from './recorder.js';
import type { Account, Device, Registry } from './registry.js';

export type Delivery = 'sent' | 'queued' | 'virtual';

/** A stanza the device confirmed: a message by its receipt (or a plain ack), a receipt/notification/call by its ack. */
export interface Confirmation {
  tag: string;
  id: string;
  /** the confirmed stanza's type (a receipt's read/played; none for a delivery receipt) */
  type?: string;
  at: number;
}

/** What the server keeps until the device confirms it (as WhatsApp does): the rest (iq, presence, ib) is fire-and-forget. */
const CONFIRMED_TAGS = new Set(['message', 'receipt', 'notification', 'call']);

/** The identity of a stanza awaiting confirmation, as both the stanza and the device's receipt or ack name it. */
const confirmationKey = (tag: string, id: string, type?: string, participant?: string): string =>
  tag === 'message' ? `message ${id}` : `${tag} ${id} ${type ?? ''} ${participant ?? ''}`;

export const unixNow = (): string => String(Math.floor(Date.now() / 1000));

export class Hub {
  /** keyed by PN device jid */
  readonly online = new Map<string, Connection>();
  /** stanzas for linked devices that are not connected, keyed by PN device jid */
  readonly offline = new Map<string, BinaryNode[]>();
  /** stanzas sent on the device's current connection and not confirmed yet, keyed by PN device jid, then stanza */
  private readonly unconfirmed = new Map<string, Map<string, BinaryNode>>();
  /** what each device confirmed, keyed by PN device jid */
  readonly confirmations = new Map<string, Confirmation[]>();
  private idCounter = 0;
  /** the silence fault: how many more connections of a device (PN device jid) go silent once they are active */
  private readonly silences = new Map<string, number>();
  /** called once a companion is active (after `ib offline`); the phone bootstraps new companions here */
  onActive: (device: Device) => void = () => {};

  constructor(
    readonly registry: Registry,
    readonly recorder: StanzaRecorder,
    readonly log: EmulatorLog,
  ) {}

  /** A server stanza id. */
  nextId(): string {
    return `emu-${++this.idCounter}`;
  }

  /** A message id in the style of Baileys' generateMessageIDV2. */
  messageId(): string {
    return `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
  }

  /** Sends to a companion now, or queues it (marked offline) until the device logs in again. */
  deliver(device: Device, node: BinaryNode): Delivery {
    if (device.virtual) return 'virtual';
    const connection = this.online.get(device.jid);
    if (connection?.active) {
      this.sendHeld(connection, device, node);
      return 'sent';
    }
    const queue = this.offline.get(device.jid) ?? [];
    queue.push({ ...node, attrs: { ...node.attrs, offline: '1' } });
    this.offline.set(device.jid, queue);
    return 'queued';
  }

  /** Sends a device its queued stanzas, then `<ib><offline count/>` (call after passive/active). */
  flushOffline(connection: Connection, device: Device): number {
    // what an earlier connection left unconfirmed (one replaced before its close was seen) comes first
    this.requeueUnconfirmed(device);
    const queue = this.offline.get(device.jid) ?? [];
    this.offline.delete(device.jid);
    connection.active = true;
    for (const node of queue) this.sendHeld(connection, device, node);
    connection.send({ tag: 'ib', attrs: { from: S_WHATSAPP_NET }, content: [{ tag: 'offline', attrs: { count: String(queue.length) } }] });
    this.onActive(device);
    return queue.length;
  }

  /**
   * The silence fault: the device's connections send it nothing (ping answers included) while their sockets stay open,
   * for `connections` connections in a row: the current one (when it is online) and the next ones, each once its login
   * is over (silenceIfDue). Returns whether the current connection went silent.
   */
  silence(device: Device, connections: number): boolean {
    const current = this.online.get(device.jid);
    const now = current?.active === true && current.open;
    if (now) current.silent = true;
    const later = connections - (now ? 1 : 0);
    if (later > 0) this.silences.set(device.jid, later);
    else this.silences.delete(device.jid);
    return now;
  }

  /** After the last answer of a login (Baileys emits `open` after it): the connection goes silent if a fault is due. */
  silenceIfDue(connection: Connection, device: Device): void {
    const left = this.silences.get(device.jid);
    if (!left) return;
    connection.silent = true;
    if (left > 1) this.silences.set(device.jid, left - 1);
    else this.silences.delete(device.jid);
    this.log('connection silent (fault)', { device: device.jid, connection: connection.id, laterConnections: left - 1 });
  }

  /**
   * The device confirmed something (a `receipt` or an `ack` it sent): what it names is no longer redelivered. A nack
   * (an ack with `error`) and a retry receipt confirm nothing.
   */
  confirm(device: Device, node: BinaryNode): void {
    const held = this.unconfirmed.get(device.jid);
    const type = node.attrs.type;
    let keys: Array<{ tag: string; id: string; type?: string }>;
    if (node.tag === 'receipt') {
      if (type === 'retry' || type === 'server-error') return;
      const ids = [node.attrs.id ?? '', ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id ?? '')];
      keys = ids.map((id) => ({ tag: 'message', id }));
    } else if (node.tag === 'ack' && !node.attrs.error && node.attrs.class) {
      keys = [{ tag: node.attrs.class, id: node.attrs.id ?? '', ...(type ? { type } : {}) }];
    } else {
      return;
    }
    const done = this.confirmations.get(device.jid) ?? [];
    for (const key of keys) {
      if (!held?.delete(confirmationKey(key.tag, key.id, key.type, node.attrs.participant))) continue;
      done.push({ ...key, at: Date.now() });
    }
    this.confirmations.set(device.jid, done);
  }

  /** The device's connection closed: what it did not confirm goes back to the head of its queue, delivered at its next login. */
  requeueUnconfirmed(device: Device): void {
    const held = this.unconfirmed.get(device.jid);
    this.unconfirmed.delete(device.jid);
    if (!held?.size) return;
    const again = [...held.values()].map((node) => ({ ...node, attrs: { ...node.attrs, offline: '1' } }));
    this.offline.set(device.jid, [...again, ...(this.offline.get(device.jid) ?? [])]);
  }

  /** Forgets a device's queues (unlinked, logged out). */
  forgetQueues(device: Device): void {
    this.offline.delete(device.jid);
    this.unconfirmed.delete(device.jid);
  }

  private sendHeld(connection: Connection, device: Device, node: BinaryNode): void {
    if (CONFIRMED_TAGS.has(node.tag)) {
      const held = this.unconfirmed.get(device.jid) ?? new Map<string, BinaryNode>();
      held.set(confirmationKey(node.tag, node.attrs.id ?? '', node.attrs.type, node.attrs.participant), node);
      this.unconfirmed.set(device.jid, held);
    }
    connection.send(node);
  }

  result(connection: Connection, request: BinaryNode, content?: BinaryNode[]): void {
    connection.send({
      tag: 'iq',
      attrs: { from: request.attrs.to ?? S_WHATSAPP_NET, type: 'result', id: request.attrs.id ?? this.nextId() },
      ...(content ? { content } : {}),
    });
  }

  error(connection: Connection, request: BinaryNode, code: number, text: string): void {
    connection.send({
      tag: 'iq',
      attrs: { from: request.attrs.to ?? S_WHATSAPP_NET, type: 'error', id: request.attrs.id ?? this.nextId() },
      content: [{ tag: 'error', attrs: { code: String(code), text } }],
    });
  }

  /** Tells every companion that `account`'s device list changed, so Baileys drops its cached device list. */
  notifyDevicesChanged(account: Account, changed: Device): void {
    const node = (): BinaryNode => ({
      tag: 'notification',
      attrs: { from: account.pnJid, type: 'devices', id: this.nextId(), t: unixNow() },
      content: [
        {
          tag: 'update',
          attrs: {},
          content: [
            { tag: 'device', attrs: { jid: changed.jid } },
            { tag: 'device', attrs: { jid: changed.lid } },
          ],
        },
      ],
    });
    for (const device of this.registry.devices.values()) {
      if (!device.virtual && device !== changed) this.deliver(device, node());
    }
  }
}
