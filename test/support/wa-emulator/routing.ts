// Routes what companions send: 1:1 messages (per-device enc, PN or LID), group messages (skmsg + sender keys) and receipts.
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import type { Groups } from './groups.js';
import type { MessageFaults } from './message-faults.js';
import { unixNow, type Hub } from './hub.js';
import { STATUS_BROADCAST, type Phones } from './phones.js';
import { profile, type AddressingMode } from './profile.js';
import type { Device } from './registry.js';

/** Attributes of an outgoing stanza that are addressed to the server and not forwarded. */
const SERVER_ONLY_ATTRS = new Set(['to', 'phash', 'device_fanout', 'addressing_mode', 'participant', 'recipient']);

export class Router {
  constructor(
    private readonly hub: Hub,
    private readonly groups: Groups,
    private readonly phones: Phones,
    private readonly faults: MessageFaults,
  ) {}

  async handleMessage(connection: Connection, node: BinaryNode): Promise<void> {
    const sender = connection.device;
    const to = node.attrs.to;
    if (!sender || !to) return;
    // a refused or withheld message goes nowhere (a retry of one, `recipient` set, is the device's own business)
    const fault = node.attrs.recipient ? undefined : this.faults.take(sender.account.phone, node);
    if (fault?.kind === 'nack') {
      connection.send({ tag: 'ack', attrs: { class: 'message', id: node.attrs.id ?? '', from: to, t: unixNow(), error: fault.code } });
      return;
    }
    if (fault?.kind === 'withhold') {
      this.faults.withhold({ connection, node });
      return;
    }
    return this.acceptMessage(connection, node);
  }

  /** The server acks the message and routes it (a withheld message, when released). */
  async acceptMessage(connection: Connection, node: BinaryNode): Promise<void> {
    const sender = connection.device;
    const to = node.attrs.to;
    if (!sender || !to) return;
    const t = unixNow();
    connection.send({ tag: 'ack', attrs: { class: 'message', id: node.attrs.id ?? '', from: to, t } });
    const server = jidDecode(to)?.server;
    if (server === 'g.us') return this.routeGroup(sender, node, t);
    if (to === STATUS_BROADCAST) return this.routeStatus(sender, node, t);
    if (server === 'broadcast' || server === 'newsletter') {
      this.hub.log('broadcast list and newsletter messages are not routed', { to });
      return;
    }
    return this.routeDirect(sender, node, t);
  }

  handleReceipt(connection: Connection, node: BinaryNode): void {
    const sender = connection.device;
    connection.send({
      tag: 'ack',
      attrs: { class: 'receipt', id: node.attrs.id ?? '', from: node.attrs.to ?? S_WHATSAPP_NET, ...(node.attrs.type ? { type: node.attrs.type } : {}) },
    });
    const to = node.attrs.to;
    const type = node.attrs.type;
    if (!sender || !to || type === 'read-self' || type === 'sender' || type === 'server-error') return;
    const group = jidDecode(to)?.server === 'g.us' ? this.groups.get(to) : undefined;
    const authorJid = group ? node.attrs.participant : to;
    if (!authorJid) return;
    const mode: AddressingMode = group ? group.addressingMode : jidDecode(authorJid)?.server === 'lid' ? 'lid' : 'pn';
    const rest = Object.fromEntries(Object.entries(node.attrs).filter(([key]) => !SERVER_ONLY_ATTRS.has(key)));
    // a retry receipt must name the exact device that failed, so the author can re-encrypt for it
    const fromJid = type === 'retry' ? this.hub.registry.addressOf(sender, mode) : this.hub.registry.userJid(sender.account, mode);
    const attrs: Record<string, string> = group
      ? { ...rest, from: group.jid, participant: fromJid, t: node.attrs.t ?? unixNow() }
      : { ...rest, from: fromJid, t: node.attrs.t ?? unixNow() };
    for (const target of this.hub.registry.devicesOf(authorJid)) {
      if (target.account === sender.account) continue;
      if (target.virtual) {
        const ids = [node.attrs.id ?? '', ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id ?? '')];
        for (const id of ids) {
          this.phones.recordReceipt(target.account, { id, chat: group?.jid ?? sender.account.pnJid, from: sender.account.pnJid, ...(type ? { type } : {}), at: Date.now() });
        }
        if (type === 'retry' && !group) {
          this.phones.retries.answer(target.account, sender, node).catch((error: unknown) => this.hub.log('virtual phone could not answer a retry receipt', { id: node.attrs.id, error: String(error) }));
        }
        continue;
      }
      this.hub.deliver(target, { tag: 'receipt', attrs: { ...attrs }, ...(node.content ? { content: node.content } : {}) });
    }
  }

  private async routeDirect(sender: Device, node: BinaryNode, t: string): Promise<void> {
    const to = node.attrs.to!;
    const deviceIdentity = getBinaryNodeChild(node, 'device-identity');
    const participants = getBinaryNodeChild(node, 'participants');
    const items: Array<[string, BinaryNode | undefined]> = participants
      ? getBinaryNodeChildren(participants, 'to').map((p) => [p.attrs.jid ?? '', getBinaryNodeChild(p, 'enc')])
      : [[to, getBinaryNodeChild(node, 'enc')]];
    // the chat: `recipient` when a retry goes to one of our own devices, otherwise `to` as a user jid
    const chat = node.attrs.recipient ?? normaliseUser(to);
    const mode: AddressingMode = jidDecode(chat)?.server === 'lid' ? 'lid' : 'pn';
    const forwarded = Object.fromEntries(Object.entries(node.attrs).filter(([key]) => !SERVER_ONLY_ATTRS.has(key)));
    for (const [jid, enc] of items) {
      const target = this.hub.registry.device(jid);
      if (!target || !enc) {
        this.hub.log('message for an unknown device dropped', { jid });
        continue;
      }
      if (target === sender) continue;
      if (target.virtual) {
        await this.phones.receive(target.account, sender, enc, node, mode);
        continue;
      }
      const own = target.account === sender.account;
      const attrs: Record<string, string> = {
        ...forwarded,
        from: this.hub.registry.addressOf(sender, mode),
        t,
        notify: sender.account.pushName,
        ...(own ? { recipient: chat } : { [profile.senderAltAttr(mode)]: this.hub.registry.userJid(sender.account, mode === 'lid' ? 'pn' : 'lid') }),
      };
      const content: BinaryNode[] = [enc];
      if (enc.attrs.type === 'pkmsg' && deviceIdentity) content.push(deviceIdentity);
      this.hub.deliver(target, { tag: 'message', attrs, content });
    }
  }

  private async routeGroup(sender: Device, node: BinaryNode, t: string): Promise<void> {
    const group = this.groups.get(node.attrs.to!);
    if (!group || !group.participants.has(sender.account)) {
      this.hub.log('group message from a non-member dropped', { to: node.attrs.to, from: sender.jid });
      return;
    }
    const mode = group.addressingMode;
    const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg');
    const deviceIdentity = getBinaryNodeChild(node, 'device-identity');
    const perDevice = new Map<Device, BinaryNode>();
    for (const p of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
      const device = this.hub.registry.device(p.attrs.jid ?? '');
      const enc = getBinaryNodeChild(p, 'enc');
      if (device && enc) perDevice.set(device, enc);
    }
    // a retry resend names one device and carries a single enc
    const retryTarget = node.attrs.participant ? this.hub.registry.device(node.attrs.participant) : undefined;
    const forwarded = Object.fromEntries(Object.entries(node.attrs).filter(([key]) => !SERVER_ONLY_ATTRS.has(key)));
    const attrs: Record<string, string> = {
      ...forwarded,
      from: group.jid,
      participant: this.hub.registry.addressOf(sender, mode),
      [profile.participantAltAttr(mode)]: this.hub.registry.userJid(sender.account, mode === 'lid' ? 'pn' : 'lid'),
      addressing_mode: mode,
      t,
      notify: sender.account.pushName,
    };
    const targets = retryTarget ? [retryTarget] : this.groups.members(group).flatMap((a) => this.hub.registry.accountDevices(a));
    for (const target of targets) {
      if (target === sender) continue;
      const direct = retryTarget ? getBinaryNodeChild(node, 'enc') : perDevice.get(target);
      if (target.virtual) {
        await this.phones.receiveGroup(target.account, sender, group, direct?.attrs.type === 'skmsg' ? undefined : direct, skmsg, node);
        continue;
      }
      const content = [direct, retryTarget ? undefined : skmsg].filter((n): n is BinaryNode => n !== undefined);
      if (!content.length) continue;
      if (direct?.attrs.type === 'pkmsg' && deviceIdentity) content.push(deviceIdentity);
      this.hub.deliver(target, { tag: 'message', attrs: { ...attrs }, content });
    }
  }

  /**
   * A status post: like a group message (skmsg, sender keys per device), but its audience is the devices the sender
   * addressed (Baileys resolves its statusJidList to devices and sends each the sender key), and it arrives from
   * `status@broadcast` with the author as `participant`, LID-addressed as Baileys encrypts it.
   */
  private async routeStatus(sender: Device, node: BinaryNode, t: string): Promise<void> {
    const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg');
    const deviceIdentity = getBinaryNodeChild(node, 'device-identity');
    const forwarded = Object.fromEntries(Object.entries(node.attrs).filter(([key]) => !SERVER_ONLY_ATTRS.has(key)));
    const attrs: Record<string, string> = {
      ...forwarded,
      from: STATUS_BROADCAST,
      participant: this.hub.registry.addressOf(sender, 'lid'),
      [profile.participantAltAttr('lid')]: this.hub.registry.userJid(sender.account, 'pn'),
      t,
      notify: sender.account.pushName,
    };
    for (const p of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
      const target = this.hub.registry.device(p.attrs.jid ?? '');
      const direct = getBinaryNodeChild(p, 'enc');
      if (!target || !direct || target === sender) continue;
      if (target.virtual) {
        await this.phones.receiveStatus(target.account, sender, direct, skmsg, node);
        continue;
      }
      const content = [direct, skmsg].filter((n): n is BinaryNode => n !== undefined);
      if (direct.attrs.type === 'pkmsg' && deviceIdentity) content.push(deviceIdentity);
      this.hub.deliver(target, { tag: 'message', attrs: { ...attrs }, content });
    }
  }
}

/** `123:4@s.whatsapp.net` → `123@s.whatsapp.net` */
function normaliseUser(jid: string): string {
  const decoded = jidDecode(jid);
  return decoded ? `${decoded.user}@${decoded.server}` : jid;
}
