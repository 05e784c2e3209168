// Groups on the sandbox network: rights (admin, super admin), participants with per-participant outcomes, invite codes, and the events every member sees.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { userJid } from '../jid.js';
import type { ChatOps, GroupInfo, GroupMemberInfo, ImageInput, InviteInfo, ParticipantAction, ParticipantOutcome } from '../types.js';
import { accountOf, deliverTo, digitsOf, nowSeconds, refOf } from './accounts.js';
import { isRegisteredNumber, type GroupMember, type SandboxGroup, type SandboxNetwork } from './network.js';

export type GroupOpName =
  | 'createGroup'
  | 'listGroups'
  | 'getGroup'
  | 'leaveGroup'
  | 'deleteGroup'
  | 'setGroupSubject'
  | 'setGroupDescription'
  | 'setGroupPicture'
  | 'updateParticipants'
  | 'getInviteCode'
  | 'revokeInviteCode'
  | 'getInviteInfo'
  | 'acceptInvite';

/** What a virtual contact can do in a group through the sandbox control route. */
export type GroupAction =
  | { kind: 'join'; code: string }
  | { kind: 'leave'; groupId: string }
  | { kind: 'subject' | 'description'; groupId: string; value: string }
  | { kind: ParticipantAction; groupId: string; participants: string[] };

const PAST: Record<ParticipantAction, 'joined' | 'left' | 'promoted' | 'demoted'> = { add: 'joined', remove: 'left', promote: 'promoted', demote: 'demoted' };

/** The group rules of the network; every method names the member acting (a session or a virtual contact). */
export class GroupNetwork {
  constructor(private readonly network: SandboxNetwork) {}

  create(actor: string, subject: string, jids: string[]): { group: GroupInfo; outcomes: ParticipantOutcome[] } {
    let id: string;
    do id = `120363${randomInt(100_000_000_000, 999_999_999_999)}@g.us`;
    while (this.network.groups.has(id));
    const group: SandboxGroup = {
      id,
      subject,
      description: '',
      ownerDigits: actor,
      createdAt: nowSeconds(),
      inviteCode: newInviteCode(),
      members: new Map([[actor, { admin: true, superAdmin: true }]]),
    };
    const outcomes = jids.map((jid) => this.admit(group, actor, jid));
    this.network.groups.set(id, group);
    this.tell(group, 'group.update', { id, action: 'created', newSubject: subject, by: refOf(this.network, actor) });
    return { group: this.info(group), outcomes };
  }

  list(actor: string): GroupInfo[] {
    return [...this.network.groups.values()].filter((g) => g.members.has(actor)).map((g) => this.info(g));
  }

  get(actor: string, groupId: string): GroupInfo {
    return this.info(this.memberOf(actor, groupId).group);
  }

  leave(actor: string, groupId: string): void {
    const { group } = this.memberOf(actor, groupId);
    const audience = [...group.members.keys()];
    group.members.delete(actor);
    deliverTo(this.network, audience, 'group.participant', participantPayload(this.network, group, 'leave', 'left', [actor], actor));
    if (group.members.size === 0) {
      this.network.groups.delete(group.id);
      return;
    }
    if (![...group.members.values()].some((m) => m.admin)) {
      // the network hands admin rights to the longest-standing member when the last admin leaves
      const [heir, member] = group.members.entries().next().value as [string, GroupMember];
      member.admin = true;
      this.tell(group, 'group.participant', participantPayload(this.network, group, 'promote', 'promoted', [heir], undefined));
    }
  }

  delete(actor: string, groupId: string): void {
    const { group } = this.rightsIn(actor, groupId, 'super');
    this.tell(group, 'group.update', { id: group.id, action: 'deleted', by: refOf(this.network, actor) });
    this.network.groups.delete(group.id);
  }

  setSubject(actor: string, groupId: string, subject: string): void {
    const { group } = this.rightsIn(actor, groupId, 'admin');
    group.subject = subject;
    this.tell(group, 'group.update', { id: group.id, newSubject: subject, by: refOf(this.network, actor) });
  }

  setDescription(actor: string, groupId: string, description: string): void {
    const { group } = this.rightsIn(actor, groupId, 'admin');
    group.description = description;
    this.tell(group, 'group.update', { id: group.id, newDescription: description, by: refOf(this.network, actor) });
  }

  setPicture(actor: string, groupId: string, image: ImageInput | null): void {
    const { group } = this.rightsIn(actor, groupId, 'admin');
    if (image) group.picture = image.sourceUrl ?? `sandbox:picture:${createHash('sha256').update(image.data).digest('hex').slice(0, 32)}`;
    else delete group.picture;
    this.tell(group, 'group.update', { id: group.id, pictureChanged: true, by: refOf(this.network, actor) });
  }

  updateParticipants(actor: string, groupId: string, action: ParticipantAction, jids: string[]): ParticipantOutcome[] {
    const { group } = this.rightsIn(actor, groupId, action === 'add' || action === 'remove' ? 'admin' : 'super');
    const audience = new Set(group.members.keys());
    const changed: string[] = [];
    const outcomes = jids.map((jid) => {
      const outcome = this.changeOne(group, actor, action, jid);
      if (outcome.ok) changed.push(digitsOf(this.network, jid)!);
      return outcome;
    });
    for (const digits of group.members.keys()) audience.add(digits);
    if (changed.length) deliverTo(this.network, audience, 'group.participant', participantPayload(this.network, group, action, PAST[action], changed, actor));
    return outcomes;
  }

  inviteCode(actor: string, groupId: string): string {
    return this.rightsIn(actor, groupId, 'admin').group.inviteCode;
  }

  revokeInvite(actor: string, groupId: string): string {
    const { group } = this.rightsIn(actor, groupId, 'admin');
    group.inviteCode = newInviteCode();
    this.tell(group, 'group.update', { id: group.id, inviteCodeChanged: true, by: refOf(this.network, actor) });
    return group.inviteCode;
  }

  inviteInfo(code: string): InviteInfo {
    const group = this.byCode(code);
    const info = this.info(group);
    return {
      id: group.id,
      subject: group.subject,
      size: group.members.size,
      createdAt: group.createdAt,
      ...(info.ownerLid ? { creatorLid: info.ownerLid } : {}),
      participants: info.participants,
    };
  }

  join(actor: string, code: string): string {
    const group = this.byCode(code);
    if (group.members.has(actor)) return group.id;
    group.members.set(actor, { admin: false, superAdmin: false });
    this.network.sessionFor(actor)?.deliver('group.update', { id: group.id, action: 'joined', by: refOf(this.network, actor) });
    this.tell(group, 'group.participant', participantPayload(this.network, group, 'join', 'joined', [actor], actor));
    return group.id;
  }

  /** A virtual contact acts in a group (sandbox control route); same rules as for sessions. */
  act(actor: string, action: GroupAction): { groupId: string; outcomes?: ParticipantOutcome[] } {
    switch (action.kind) {
      case 'join':
        return { groupId: this.join(actor, action.code) };
      case 'leave':
        this.leave(actor, action.groupId);
        return { groupId: action.groupId };
      case 'subject':
        this.setSubject(actor, action.groupId, action.value);
        return { groupId: action.groupId };
      case 'description':
        this.setDescription(actor, action.groupId, action.value);
        return { groupId: action.groupId };
      default:
        return { groupId: action.groupId, outcomes: this.updateParticipants(actor, action.groupId, action.kind, action.participants) };
    }
  }

  // ---- internals ----

  private info(group: SandboxGroup): GroupInfo {
    return {
      id: group.id,
      subject: group.subject,
      description: group.description,
      ownerLid: this.network.lidOf(group.ownerDigits),
      ownerPhoneNumber: `+${group.ownerDigits}`,
      createdAt: group.createdAt,
      participants: [...group.members].map(([digits, member]) => this.memberInfo(digits, member)),
    };
  }

  private memberInfo(digits: string, member: GroupMember): GroupMemberInfo {
    return { jid: userJid(digits), phoneNumber: `+${digits}`, lid: this.network.lidOf(digits), isAdmin: member.admin || member.superAdmin, isSuperAdmin: member.superAdmin };
  }

  private group(groupId: string): SandboxGroup {
    const group = this.network.groups.get(groupId);
    if (!group) throw new GatewayError('GROUP_NOT_FOUND', `group ${groupId} not found`);
    return group;
  }

  private memberOf(actor: string, groupId: string): { group: SandboxGroup; member: GroupMember } {
    const group = this.group(groupId);
    const member = group.members.get(actor);
    if (!member) throw new GatewayError('NOT_GROUP_MEMBER', `+${actor} is not a member of ${groupId}`);
    return { group, member };
  }

  private rightsIn(actor: string, groupId: string, needed: 'admin' | 'super'): { group: SandboxGroup; member: GroupMember } {
    const found = this.memberOf(actor, groupId);
    if (needed === 'super' && !found.member.superAdmin) {
      throw new GatewayError('NOT_GROUP_SUPER_ADMIN', `only the creator (super admin) of ${groupId} can do this`);
    }
    if (needed === 'admin' && !found.member.admin && !found.member.superAdmin) {
      throw new GatewayError('NOT_GROUP_ADMIN', `only admins of ${groupId} can do this`);
    }
    return found;
  }

  private byCode(code: string): SandboxGroup {
    for (const group of this.network.groups.values()) if (group.inviteCode === code) return group;
    throw new GatewayError('INVITE_NOT_FOUND', 'the invite code is not valid (revoked, or the group is gone)');
  }

  /** Adds one participant at creation or by an admin. */
  private admit(group: SandboxGroup, actor: string, jid: string): ParticipantOutcome {
    const digits = digitsOf(this.network, jid);
    if (!digits || !isRegisteredNumber(digits)) return failed(jid, 'NOT_REGISTERED', 'the number is not on the network');
    if (group.members.has(digits)) return failed(jid, 'ALREADY_MEMBER', 'already a member of the group');
    if (accountOf(this.network, digits).blocked.has(actor)) {
      return failed(jid, 'PRIVACY_RESTRICTED', 'the contact does not allow you to add it to groups; send it the invite link instead');
    }
    group.members.set(digits, { admin: false, superAdmin: false });
    return { jid, ok: true };
  }

  private changeOne(group: SandboxGroup, actor: string, action: ParticipantAction, jid: string): ParticipantOutcome {
    if (action === 'add') return this.admit(group, actor, jid);
    const digits = digitsOf(this.network, jid);
    const member = digits === undefined ? undefined : group.members.get(digits);
    if (!digits || !member) return failed(jid, 'NOT_MEMBER', 'not a member of the group');
    switch (action) {
      case 'remove':
        if (digits === actor) return failed(jid, 'NOT_ALLOWED', 'a member cannot remove itself; leave the group instead');
        if (member.superAdmin) return failed(jid, 'NOT_ALLOWED', 'the creator of the group cannot be removed');
        group.members.delete(digits);
        return { jid, ok: true };
      case 'promote':
        member.admin = true;
        return { jid, ok: true };
      case 'demote':
        if (member.superAdmin) return failed(jid, 'NOT_ALLOWED', 'the creator of the group cannot be demoted');
        member.admin = false;
        return { jid, ok: true };
    }
  }

  private tell(group: SandboxGroup, type: 'group.update' | 'group.participant', payload: Record<string, unknown>): void {
    deliverTo(this.network, [...group.members.keys()], type, payload);
  }
}

/** The group operations of one account. */
export class SandboxGroups implements Pick<ChatOps, GroupOpName> {
  private readonly groups: GroupNetwork;

  constructor(
    network: SandboxNetwork,
    private readonly me: string,
  ) {
    this.groups = new GroupNetwork(network);
  }

  createGroup = async (subject: string, participants: string[]) => this.groups.create(this.me, subject, participants);
  listGroups = async () => this.groups.list(this.me);
  getGroup = async (groupId: string) => this.groups.get(this.me, groupId);
  leaveGroup = async (groupId: string) => this.groups.leave(this.me, groupId);
  deleteGroup = async (groupId: string) => this.groups.delete(this.me, groupId);
  setGroupSubject = async (groupId: string, subject: string) => this.groups.setSubject(this.me, groupId, subject);
  setGroupDescription = async (groupId: string, description: string) => this.groups.setDescription(this.me, groupId, description);
  setGroupPicture = async (groupId: string, image: ImageInput | null) => this.groups.setPicture(this.me, groupId, image);
  updateParticipants = async (groupId: string, action: ParticipantAction, jids: string[]) => this.groups.updateParticipants(this.me, groupId, action, jids);
  getInviteCode = async (groupId: string) => this.groups.inviteCode(this.me, groupId);
  revokeInviteCode = async (groupId: string) => this.groups.revokeInvite(this.me, groupId);
  getInviteInfo = async (code: string) => this.groups.inviteInfo(code);
  acceptInvite = async (code: string) => this.groups.join(this.me, code);
}

function participantPayload(
  network: SandboxNetwork,
  group: SandboxGroup,
  action: ParticipantAction | 'join' | 'leave',
  field: 'joined' | 'left' | 'promoted' | 'demoted',
  digits: string[],
  actor: string | undefined,
): Record<string, unknown> {
  return {
    id: group.id,
    action,
    joined: [],
    left: [],
    promoted: [],
    demoted: [],
    [field]: digits.map(userJid),
    participants: digits.map((d) => refOf(network, d)),
    ...(actor ? { by: refOf(network, actor) } : {}),
  };
}

function failed(jid: string, failure: NonNullable<ParticipantOutcome['failure']>, message: string): ParticipantOutcome {
  return { jid, ok: false, failure, message };
}

function newInviteCode(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}
