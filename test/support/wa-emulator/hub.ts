// Shared server state: who is online, per-device offline queues, stanza ids, and reply helpers used by every handler.
import { randomBytes } from 'node:crypto';
import { S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import type { EmulatorLog } from './log.js';
import type { StanzaRecorder } from './recorder.js';
import type { Account, Device, Registry } from './registry.js';

export type Delivery = 'sent' | 'queued' | 'virtual';

export const unixNow = (): string => String(Math.floor(Date.now() / 1000));

export class Hub {
  /** keyed by PN device jid */
  readonly online = new Map<string, Connection>();
  /** stanzas for linked devices that are not connected, keyed by PN device jid */
  readonly offline = new Map<string, BinaryNode[]>();
  private idCounter = 0;
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
      connection.send(node);
      return 'sent';
    }
    const queue = this.offline.get(device.jid) ?? [];
    queue.push({ ...node, attrs: { ...node.attrs, offline: '1' } });
    this.offline.set(device.jid, queue);
    return 'queued';
  }

  /** Sends a device its queued stanzas, then `<ib><offline count/>` (call after passive/active). */
  flushOffline(connection: Connection, device: Device): number {
    const queue = this.offline.get(device.jid) ?? [];
    this.offline.delete(device.jid);
    connection.active = true;
    for (const node of queue) connection.send(node);
    connection.send({ tag: 'ib', attrs: { from: S_WHATSAPP_NET }, content: [{ tag: 'offline', attrs: { count: String(queue.length) } }] });
    this.onActive(device);
    return queue.length;
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
