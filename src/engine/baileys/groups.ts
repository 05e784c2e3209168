// Groups on Baileys: metadata ↔ GroupInfo, per-participant outcomes, invites, and "delete" done as the apps do it (empty the group, leave).
import { type GroupMetadata, type GroupParticipant, type WASocket } from '@whiskeysockets/baileys';
import { GatewayError } from '../../errors.js';
import { phoneOfJid } from '../jid.js';
import type { ChatOps, GroupInfo, GroupMemberInfo, ImageInput, InviteInfo, ParticipantAction, ParticipantFailure, ParticipantOutcome } from '../types.js';
import { required, toGatewayError, withTimeout, type SessionContext } from './context.js';
import { bare, type Identities } from './identities.js';
import { updatePicture } from './pictures.js';

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

const REMOVE_BATCH = 50;

/** iq error codes of the group namespace (w:g2) → the gateway's errors */
const groupErrors = (groupId: string) => ({
  404: () => new GatewayError('GROUP_NOT_FOUND', `group ${groupId} not found`),
  403: () => new GatewayError('NOT_GROUP_MEMBER', `this session is not a member of ${groupId}`),
  401: () => new GatewayError('NOT_GROUP_ADMIN', `only admins of ${groupId} can do this`),
});
const inviteErrors = {
  404: () => new GatewayError('INVITE_NOT_FOUND', 'the invite code is not valid (revoked, or the group is gone)'),
  406: () => new GatewayError('INVITE_NOT_FOUND', 'the invite code is not valid (revoked, or the group is gone)'),
  410: () => new GatewayError('INVITE_NOT_FOUND', 'the invite code was revoked'),
};

export class BaileysGroups implements Pick<ChatOps, GroupOpName> {
  constructor(
    private readonly ctx: SessionContext,
    /** called before acceptInvite so the group's arrival reads "joined" */
    private readonly expectJoin: (groupId: string) => void,
  ) {}

  async createGroup(subject: string, participants: string[]): Promise<{ group: GroupInfo; outcomes: ParticipantOutcome[] }> {
    const meta = await this.call((s) => s.groupCreate(subject, participants), 'create group');
    this.ctx.groups.set(meta.id, meta);
    // groupCreate reports no per-participant result: whoever is not in the new group was not added
    const outcomes = participants.map((jid): ParticipantOutcome => {
      const inGroup = meta.participants.some((p) => this.sameMember(p, jid));
      return inGroup ? { jid, ok: true } : { jid, ok: false, failure: 'FAILED', message: 'not added: not on WhatsApp, or its privacy settings do not allow it; send it the invite link' };
    });
    return { group: groupInfoOf(meta, this.ctx.ids), outcomes };
  }

  async listGroups(): Promise<GroupInfo[]> {
    const all = await this.call((s) => s.groupFetchAllParticipating(), 'list groups');
    for (const meta of Object.values(all)) this.ctx.groups.set(meta.id, meta);
    return Object.values(all).map((m) => groupInfoOf(m, this.ctx.ids));
  }

  async getGroup(groupId: string): Promise<GroupInfo> {
    return groupInfoOf(await this.metadata(groupId), this.ctx.ids);
  }

  async leaveGroup(groupId: string): Promise<void> {
    await this.metadata(groupId);
    await this.call((s) => s.groupLeave(groupId), 'leave group', groupErrors(groupId));
    this.ctx.groups.delete(groupId);
  }

  /**
   * WhatsApp has no "delete group": the apps let the creator remove everyone and exit. So does this: revoke the
   * invite link (no one can come back through it), remove every other member in batches, then leave.
   * The group ends "emptied and left"; it still exists on the network, with no members.
   */
  async deleteGroup(groupId: string): Promise<void> {
    const meta = await this.metadata(groupId);
    const me = this.ctx.me();
    const mine = meta.participants.find((p) => this.isMe(p, me));
    if (!mine) throw new GatewayError('NOT_GROUP_MEMBER', `this session is not a member of ${groupId}`);
    if (!mine.admin) throw new GatewayError('NOT_GROUP_ADMIN', `only admins of ${groupId} can empty it`);
    await this.call((s) => s.groupRevokeInvite(groupId), 'revoke invite', groupErrors(groupId));
    const others = meta.participants.filter((p) => !this.isMe(p, me)).map((p) => p.id);
    for (let i = 0; i < others.length; i += REMOVE_BATCH) {
      const batch = others.slice(i, i + REMOVE_BATCH);
      await this.call((s) => s.groupParticipantsUpdate(groupId, batch, 'remove'), 'remove participants', groupErrors(groupId));
    }
    await this.call((s) => s.groupLeave(groupId), 'leave group', groupErrors(groupId));
    this.ctx.groups.delete(groupId);
  }

  async setGroupSubject(groupId: string, subject: string): Promise<void> {
    await this.call((s) => s.groupUpdateSubject(groupId, subject), 'set subject', groupErrors(groupId));
  }

  async setGroupDescription(groupId: string, description: string): Promise<void> {
    await this.call((s) => s.groupUpdateDescription(groupId, description || undefined), 'set description', groupErrors(groupId));
  }

  async setGroupPicture(groupId: string, image: ImageInput | null): Promise<void> {
    if (!image) return void (await this.call((s) => s.removeProfilePicture(groupId), 'remove picture', groupErrors(groupId)));
    await this.call((s) => updatePicture(s, groupId, image), 'set picture', groupErrors(groupId));
  }

  async updateParticipants(groupId: string, action: ParticipantAction, jids: string[]): Promise<ParticipantOutcome[]> {
    const results = await this.call((s) => s.groupParticipantsUpdate(groupId, jids, action), `${action} participants`, groupErrors(groupId));
    return jids.map((jid): ParticipantOutcome => {
      const result = results.find((r) => this.sameJid(r.jid, jid) || this.sameJid(r.content?.attrs?.phone_number, jid));
      if (!result) return { jid, ok: false, failure: 'FAILED', message: 'the network did not report on this participant' };
      if (result.status === '200') return { jid, ok: true };
      const failure = participantFailure(result.status, action);
      return { jid, ok: false, failure, message: `${failure.toLowerCase().replace(/_/g, ' ')} (${result.status})` };
    });
  }

  async getInviteCode(groupId: string): Promise<string> {
    return required(await this.call((s) => s.groupInviteCode(groupId), 'invite code', groupErrors(groupId)), 'invite code');
  }

  async revokeInviteCode(groupId: string): Promise<string> {
    return required(await this.call((s) => s.groupRevokeInvite(groupId), 'revoke invite', groupErrors(groupId)), 'revoke invite');
  }

  async getInviteInfo(code: string): Promise<InviteInfo> {
    const meta = await this.call((s) => s.groupGetInviteInfo(code), 'invite info', inviteErrors);
    const info = groupInfoOf(meta, this.ctx.ids);
    return {
      id: meta.id,
      subject: meta.subject,
      size: meta.size ?? meta.participants.length,
      createdAt: meta.creation ?? 0,
      ...(info.ownerLid ? { creatorLid: info.ownerLid } : {}),
      participants: info.participants,
    };
  }

  async acceptInvite(code: string): Promise<string> {
    const info = await this.getInviteInfo(code);
    this.expectJoin(info.id);
    const jid = await this.call((s) => s.groupAcceptInvite(code), 'join group', inviteErrors);
    return jid ?? info.id;
  }

  // ---- internals ----

  /** Fresh metadata (and the cache refreshed with it). */
  async metadata(groupId: string): Promise<GroupMetadata> {
    const meta = await this.call((s) => s.groupMetadata(groupId), 'group metadata', groupErrors(groupId));
    this.ctx.groups.set(groupId, meta);
    return meta;
  }

  private async call<T>(work: (sock: WASocket) => Promise<T>, what: string, errors: Record<number, () => GatewayError> = {}): Promise<T> {
    const sock = await this.ctx.ready();
    try {
      return await withTimeout(work(sock), what);
    } catch (err) {
      throw toGatewayError(err, what, errors);
    }
  }

  private sameJid(a: string | undefined, b: string): boolean {
    if (!a) return false;
    const ids = this.ctx.ids;
    const x = bare(a);
    const y = bare(b);
    return x === y || (ids.pnOf(x) !== undefined && ids.pnOf(x) === ids.pnOf(y)) || (ids.lidOf(x) !== undefined && ids.lidOf(x) === ids.lidOf(y));
  }

  private sameMember(p: GroupParticipant, jid: string): boolean {
    return [p.id, p.phoneNumber, p.lid].some((j) => this.sameJid(j ?? undefined, jid));
  }

  private isMe(p: GroupParticipant, me: { pn?: string; lid?: string }): boolean {
    return [p.id, p.phoneNumber, p.lid].some((j) => !!j && (bare(j) === me.pn || bare(j) === me.lid));
  }
}

/** A participant error code of groupParticipantsUpdate → the gateway's failure kind. */
export function participantFailure(status: string, action: ParticipantAction): ParticipantFailure {
  switch (status) {
    case '403':
      return 'PRIVACY_RESTRICTED';
    case '408':
      return 'RECENTLY_LEFT';
    case '409':
      return action === 'add' ? 'ALREADY_MEMBER' : 'FAILED';
    case '404':
      return action === 'add' ? 'NOT_REGISTERED' : 'NOT_MEMBER';
    case '401':
    case '406':
      return 'NOT_ALLOWED';
    default:
      return 'FAILED';
  }
}

export function groupInfoOf(meta: GroupMetadata, ids: Identities): GroupInfo {
  const ownerLid = ids.lidOf(meta.owner) ?? ids.lidOf(meta.ownerPn);
  const ownerPn = ids.pnOf(meta.ownerPn) ?? ids.pnOf(meta.owner);
  return {
    id: meta.id,
    subject: meta.subject ?? '',
    description: meta.desc ?? '',
    ...(ownerLid ? { ownerLid } : {}),
    ...(ownerPn ? { ownerPhoneNumber: phoneOfJid(ownerPn)! } : {}),
    createdAt: meta.creation ?? 0,
    participants: meta.participants.map((p) => memberInfo(p, ids)),
  };
}

function memberInfo(p: GroupParticipant, ids: Identities): GroupMemberInfo {
  ids.remember(p.phoneNumber ?? p.id, p.lid ?? p.id, 'group');
  const pn = ids.pnOf(p.phoneNumber) ?? ids.pnOf(p.id);
  const lid = ids.lidOf(p.lid) ?? ids.lidOf(p.id);
  return {
    jid: pn ?? lid ?? bare(p.id) ?? p.id,
    ...(pn ? { phoneNumber: phoneOfJid(pn)! } : {}),
    ...(lid ? { lid } : {}),
    isAdmin: p.admin === 'admin' || p.admin === 'superadmin' || !!p.isAdmin || !!p.isSuperAdmin,
    isSuperAdmin: p.admin === 'superadmin' || !!p.isSuperAdmin,
  };
}

/** What a groups.update changed, in group.update fields; undefined when nothing did. */
export function groupChanges(before: GroupMetadata | undefined, update: Partial<GroupMetadata>): Record<string, unknown> | undefined {
  const changes: Record<string, unknown> = {};
  if (update.subject !== undefined && update.subject !== before?.subject) changes.newSubject = update.subject;
  if (update.desc !== undefined && update.desc !== before?.desc) changes.newDescription = update.desc ?? '';
  for (const field of ['announce', 'restrict', 'memberAddMode', 'joinApprovalMode', 'ephemeralDuration'] as const) {
    if (update[field] !== undefined && update[field] !== before?.[field]) changes[field] = update[field];
  }
  if (update.inviteCode !== undefined && update.inviteCode !== before?.inviteCode) changes.inviteCodeChanged = true;
  return Object.keys(changes).length ? changes : undefined;
}

/** Applies a membership change to cached metadata, so sends after it reach the right members (a group the session left is dropped). */
export function applyParticipantChange(
  cache: Map<string, GroupMetadata>,
  update: { id: string; action: string; participants: GroupParticipant[] },
  me: { pn?: string; lid?: string },
): void {
  const cached = cache.get(update.id);
  if (!cached) return;
  const same = (a: GroupParticipant, b: GroupParticipant) => a.id === b.id || (!!a.phoneNumber && a.phoneNumber === b.phoneNumber) || (!!a.lid && a.lid === b.lid);
  const changed = (p: GroupParticipant) => update.participants.some((u) => same(p, u));
  let participants = cached.participants;
  switch (update.action) {
    case 'add':
      participants = [...participants.filter((p) => !changed(p)), ...update.participants.map((p) => ({ ...p, admin: null }))];
      break;
    case 'remove':
      participants = participants.filter((p) => !changed(p));
      break;
    case 'promote':
    case 'demote':
      participants = participants.map((p) => (changed(p) ? { ...p, admin: update.action === 'promote' ? ('admin' as const) : null } : p));
      break;
    default:
      cache.delete(update.id);
      return;
  }
  const stillMember = participants.some((p) => [p.id, p.phoneNumber, p.lid].some((j) => j && (bare(j) === me.pn || bare(j) === me.lid)));
  if (stillMember) cache.set(update.id, { ...cached, participants, size: participants.length });
  else cache.delete(update.id);
}
