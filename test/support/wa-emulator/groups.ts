// Groups: the store, `w:g2` iqs (create, metadata, participants, subject, description, invite, settings, leave) and w:gp2 notifications.
import { randomBytes, randomInt } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import { unixNow, type Hub } from './hub.js';
import { profile, type AddressingMode } from './profile.js';
import type { Account } from './registry.js';

export type GroupRole = 'superadmin' | 'admin' | null;

export interface Group {
  /** user part, `120363…` */
  id: string;
  jid: string;
  subject: string;
  subjectOwner: Account;
  subjectTime: string;
  creator: Account;
  creation: string;
  description: { id: string; body: string; owner: Account; time: string } | undefined;
  participants: Map<Account, GroupRole>;
  addressingMode: AddressingMode;
  inviteCode: string;
  announce: boolean;
  restrict: boolean;
  ephemeral: number;
}

export interface GroupInfo {
  jid: string;
  subject: string;
  description?: string;
  addressingMode: AddressingMode;
  participants: Array<{ phone: string; jid: string; lid: string; role: GroupRole }>;
}

const PARTICIPANT_OPS = new Set(['add', 'remove', 'promote', 'demote']);
const SETTINGS = new Set(['announcement', 'not_announcement', 'locked', 'unlocked']);

export class Groups {
  readonly groups = new Map<string, Group>();

  constructor(private readonly hub: Hub) {}

  get(jid: string): Group | undefined {
    return this.groups.get(jidDecode(jid)?.user ?? jid);
  }

  members(group: Group): Account[] {
    return [...group.participants.keys()];
  }

  info(group: Group): GroupInfo {
    return {
      jid: group.jid,
      subject: group.subject,
      ...(group.description ? { description: group.description.body } : {}),
      addressingMode: group.addressingMode,
      participants: [...group.participants].map(([a, role]) => ({ phone: a.phone, jid: a.pnJid, lid: a.lidJid, role })),
    };
  }

  /** Creates a group as `creator` (used by the create iq and by the control API) and notifies every member. */
  create(creator: Account, subject: string, members: Account[], addressingMode = profile.defaultGroupAddressingMode): Group {
    const now = unixNow();
    const id = `120363${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e9)).padStart(9, '0')}`;
    const group: Group = {
      id,
      jid: `${id}@g.us`,
      subject,
      subjectOwner: creator,
      subjectTime: now,
      creator,
      creation: now,
      description: undefined,
      participants: new Map<Account, GroupRole>([[creator, 'superadmin']]),
      addressingMode,
      inviteCode: this.newInviteCode(),
      announce: false,
      restrict: false,
      ephemeral: 0,
    };
    for (const member of members) if (member !== creator) group.participants.set(member, null);
    this.groups.set(id, group);
    this.notify(group, creator, { tag: 'create', attrs: {}, content: [this.groupNode(group)] });
    return group;
  }

  handleIq(connection: Connection, request: BinaryNode, child: BinaryNode | undefined): void {
    const me = connection.device?.account;
    if (!me || !child) return this.hub.result(connection, request);
    const toAll = request.attrs.to === '@g.us';
    if (toAll) return this.handleGlobal(connection, request, child, me);
    const group = this.get(request.attrs.to ?? '');
    if (!group) return this.hub.error(connection, request, 404, 'item-not-found');
    const role = group.participants.get(me);
    if (role === undefined) return this.hub.error(connection, request, 403, 'forbidden');
    const isAdmin = role !== null;
    const tag = child.tag;

    if (tag === 'query') return this.hub.result(connection, request, [this.groupNode(group)]);
    if (tag === 'invite') {
      if (!isAdmin) return this.hub.error(connection, request, 401, 'not-authorized');
      if (request.attrs.type === 'set') {
        group.inviteCode = this.newInviteCode();
        this.notify(group, me, { tag: 'invite', attrs: { code: group.inviteCode } });
      }
      return this.hub.result(connection, request, [{ tag: 'invite', attrs: { code: group.inviteCode } }]);
    }
    if (PARTICIPANT_OPS.has(tag)) {
      if (!isAdmin) return this.hub.error(connection, request, 401, 'not-authorized');
      return this.participantsOp(connection, request, group, me, child);
    }
    if (tag === 'subject') {
      if (group.restrict && !isAdmin) return this.hub.error(connection, request, 401, 'not-authorized');
      group.subject = textOf(child);
      group.subjectOwner = me;
      group.subjectTime = unixNow();
      this.hub.result(connection, request);
      return this.notify(group, me, { tag: 'subject', attrs: { subject: group.subject, s_o: this.jidOf(group, me), s_t: group.subjectTime } });
    }
    if (tag === 'description') {
      if (group.restrict && !isAdmin) return this.hub.error(connection, request, 401, 'not-authorized');
      const body = getBinaryNodeChild(child, 'body');
      if (child.attrs.delete === 'true' || !body) {
        group.description = undefined;
        this.hub.result(connection, request);
        return this.notify(group, me, { tag: 'description', attrs: { id: child.attrs.id ?? this.hub.nextId() }, content: [{ tag: 'delete', attrs: {} }] });
      }
      group.description = { id: child.attrs.id ?? this.hub.nextId(), body: textOf(body), owner: me, time: unixNow() };
      this.hub.result(connection, request);
      return this.notify(group, me, this.descriptionNode(group));
    }
    if (SETTINGS.has(tag)) {
      if (!isAdmin) return this.hub.error(connection, request, 401, 'not-authorized');
      if (tag === 'announcement' || tag === 'not_announcement') group.announce = tag === 'announcement';
      else group.restrict = tag === 'locked';
      this.hub.result(connection, request);
      return this.notify(group, me, { tag, attrs: {} });
    }
    if (tag === 'ephemeral' || tag === 'not_ephemeral') {
      group.ephemeral = tag === 'ephemeral' ? Number(child.attrs.expiration ?? 0) : 0;
      this.hub.result(connection, request);
      return this.notify(group, me, tag === 'ephemeral' ? { tag, attrs: { expiration: String(group.ephemeral) } } : { tag, attrs: {} });
    }
    this.hub.log('unhandled w:g2 iq; empty result', { tag, type: request.attrs.type });
    this.hub.result(connection, request);
  }

  /** The `<group>` node Baileys' extractGroupMetadata reads. */
  groupNode(group: Group): BinaryNode {
    const lid = group.addressingMode === 'lid';
    const content: BinaryNode[] = [...group.participants].map(([account, role]) => this.participantNode(group, account, role));
    if (group.description) content.push(this.descriptionNode(group));
    if (group.announce) content.push({ tag: 'announcement', attrs: {} });
    if (group.restrict) content.push({ tag: 'locked', attrs: {} });
    if (group.ephemeral) content.push({ tag: 'ephemeral', attrs: { expiration: String(group.ephemeral) } });
    return {
      tag: 'group',
      attrs: {
        id: group.id,
        subject: group.subject,
        s_o: this.jidOf(group, group.subjectOwner),
        s_t: group.subjectTime,
        creation: group.creation,
        creator: this.jidOf(group, group.creator),
        ...(lid ? { creator_pn: group.creator.pnJid, s_o_pn: group.subjectOwner.pnJid } : {}),
        addressing_mode: group.addressingMode,
        size: String(group.participants.size),
      },
      content,
    };
  }

  /** A member's user jid in the group's addressing mode. */
  jidOf(group: Group, account: Account): string {
    return this.hub.registry.userJid(account, group.addressingMode);
  }

  private handleGlobal(connection: Connection, request: BinaryNode, child: BinaryNode, me: Account): void {
    if (child.tag === 'create') {
      const members = getBinaryNodeChildren(child, 'participant').map((p) => this.hub.registry.account(p.attrs.jid ?? ''));
      const known = members.filter((a): a is Account => a !== undefined);
      const group = this.create(me, child.attrs.subject ?? '', known);
      return this.hub.result(connection, request, [this.groupNode(group)]);
    }
    if (child.tag === 'participating') {
      const mine = [...this.groups.values()].filter((g) => g.participants.has(me));
      return this.hub.result(connection, request, [{ tag: 'groups', attrs: {}, content: mine.map((g) => this.groupNode(g)) }]);
    }
    if (child.tag === 'leave') {
      for (const node of getBinaryNodeChildren(child, 'group')) {
        const group = this.get(node.attrs.id ?? '');
        if (!group || !group.participants.has(me)) continue;
        this.notify(group, me, { tag: 'remove', attrs: {}, content: [this.participantNode(group, me, null)] });
        group.participants.delete(me);
      }
      return this.hub.result(connection, request, [{ tag: 'leave', attrs: {}, content: getBinaryNodeChildren(child, 'group') }]);
    }
    if (child.tag === 'invite' && child.attrs.code) {
      const group = [...this.groups.values()].find((g) => g.inviteCode === child.attrs.code);
      if (!group) return this.hub.error(connection, request, 404, 'item-not-found');
      if (request.attrs.type === 'get') return this.hub.result(connection, request, [this.groupNode(group)]);
      if (!group.participants.has(me)) {
        group.participants.set(me, null);
        this.notify(group, me, { tag: 'add', attrs: { reason: 'invite' }, content: [this.participantNode(group, me, null)] });
      }
      return this.hub.result(connection, request, [{ tag: 'group', attrs: { jid: group.jid } }]);
    }
    this.hub.log('unhandled w:g2 iq to @g.us; empty result', { tag: child.tag });
    this.hub.result(connection, request);
  }

  private participantsOp(connection: Connection, request: BinaryNode, group: Group, me: Account, child: BinaryNode): void {
    const op = child.tag;
    const answered: BinaryNode[] = [];
    const changed: Account[] = [];
    for (const p of getBinaryNodeChildren(child, 'participant')) {
      const jid = p.attrs.jid ?? '';
      const account = this.hub.registry.account(jid);
      let error: string | undefined;
      if (!account) error = op === 'add' ? '404' : '406';
      else if (op === 'add' && group.participants.has(account)) error = '409';
      else if (op !== 'add' && !group.participants.has(account)) error = '404';
      if (account && !error) {
        if (op === 'add') group.participants.set(account, null);
        if (op === 'promote') group.participants.set(account, 'admin');
        if (op === 'demote') group.participants.set(account, null);
        changed.push(account);
      }
      answered.push({
        tag: 'participant',
        attrs: { jid, ...(error ? { error } : {}), ...(account && group.addressingMode === 'lid' ? { phone_number: account.pnJid } : {}) },
      });
    }
    this.hub.result(connection, request, [{ tag: op, attrs: {}, content: answered }]);
    if (!changed.length) return;
    const notification: BinaryNode = { tag: op, attrs: {}, content: changed.map((a) => this.participantNode(group, a, group.participants.get(a) ?? null)) };
    // removed members hear about it too, then leave the member list
    this.notify(group, me, notification, op === 'remove' ? changed : []);
    if (op === 'remove') for (const account of changed) group.participants.delete(account);
  }

  private participantNode(group: Group, account: Account, role: GroupRole): BinaryNode {
    const lid = group.addressingMode === 'lid';
    return {
      tag: 'participant',
      attrs: {
        jid: this.jidOf(group, account),
        ...(lid ? { phone_number: account.pnJid } : { lid: account.lidJid }),
        ...(role ? { type: role } : {}),
      },
    };
  }

  private descriptionNode(group: Group): BinaryNode {
    const d = group.description!;
    return {
      tag: 'description',
      attrs: { id: d.id, participant: this.jidOf(group, d.owner), t: d.time, ...(group.addressingMode === 'lid' ? { participant_pn: d.owner.pnJid } : {}) },
      content: [{ tag: 'body', attrs: {}, content: Buffer.from(d.body) }],
    };
  }

  /** A `w:gp2` notification to every companion of every member (and of `extra` accounts). */
  private notify(group: Group, actor: Account, child: BinaryNode, extra: Account[] = []): void {
    const t = unixNow();
    const recipients = new Set([...group.participants.keys(), ...extra]);
    for (const account of recipients) {
      for (const device of this.hub.registry.companions(account)) {
        this.hub.deliver(device, {
          tag: 'notification',
          attrs: {
            from: group.jid,
            type: 'w:gp2',
            id: this.hub.nextId(),
            t,
            participant: this.jidOf(group, actor),
            ...(group.addressingMode === 'lid' ? { participant_pn: actor.pnJid } : {}),
            notify: actor.pushName,
          },
          content: [child],
        });
      }
    }
  }

  private newInviteCode(): string {
    return randomBytes(16).toString('base64url').slice(0, 22);
  }
}

const textOf = (node: BinaryNode): string =>
  node.content instanceof Uint8Array ? Buffer.from(node.content).toString('utf8') : typeof node.content === 'string' ? node.content : '';
