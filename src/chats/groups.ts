// Group operations of SPEC §4 "Groups": create, read, leave, delete, settings, participants with per-participant results, invites.
import { GatewayError, ValidationError } from '../errors.js';
import type { EngineSession, GroupInfo, GroupMemberInfo, InviteInfo, ParticipantAction, ParticipantOutcome } from '../engine/types.js';
import type { StreamedBase64 } from '../media/base64.js';
import { forCaller, type MediaSource } from '../messages/content.js';
import type { Principal } from '../auth/scopes.js';
import type { SessionManager } from '../sessions/manager.js';
import { groupJid, INVITE_BASE_URL, inviteCode, participantJids } from './ids.js';
import { loadPicture } from './picture.js';

export const GROUP_NAME_MAX = 25;
export const GROUP_PARTICIPANTS_MAX = 256;

export interface ParticipantView {
  phoneNumber?: string;
  lid?: string;
  isAdmin: boolean;
  isSuperAdmin: boolean;
}

export interface GroupView {
  id: string;
  name: string;
  description: string;
  ownerLid?: string;
  createdAt: number;
  participants: ParticipantView[];
}

export interface InvitePreviewView {
  id: string;
  subject: string;
  size: number;
  createdAt: number;
  creatorLid?: string;
  participants: ParticipantView[];
}

export type ParticipantStatus = 'added' | 'removed' | 'promoted' | 'demoted' | 'failed';

/** One participant of a participants request: done, or failed with a reason code. */
export interface ParticipantResult {
  participant: string;
  status: ParticipantStatus;
  error?: { code: string; message: string };
}

const DONE_STATUS: Record<ParticipantAction, ParticipantStatus> = { add: 'added', remove: 'removed', promote: 'promoted', demote: 'demoted' };

export class GroupsService {
  constructor(private readonly deps: { sessions: SessionManager; mediaSource: MediaSource }) {}

  async create(session: string, name: string, participants: string[]): Promise<GroupView & { results: ParticipantResult[] }> {
    checkName(name, '/name');
    checkCount(participants);
    const jids = participantJids(participants);
    const { group, outcomes } = await (await this.engine(session)).createGroup(name, jids);
    return { ...groupView(group), results: outcomes.map((o) => resultOf('add', o)) };
  }

  async list(session: string): Promise<GroupView[]> {
    const groups = await (await this.engine(session)).listGroups();
    return groups.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)).map(groupView);
  }

  async get(session: string, groupId: string): Promise<GroupView> {
    return groupView(await (await this.engine(session)).getGroup(groupJid(groupId)));
  }

  async participants(session: string, groupId: string): Promise<ParticipantView[]> {
    return (await (await this.engine(session)).getGroup(groupJid(groupId))).participants.map(participantView);
  }

  async leave(session: string, groupId: string): Promise<void> {
    await (await this.engine(session)).leaveGroup(groupJid(groupId));
  }

  async delete(session: string, groupId: string): Promise<void> {
    const id = groupJid(groupId);
    const engine = await this.withRole(session, id, 'super');
    await engine.deleteGroup(id);
  }

  async setSubject(session: string, groupId: string, subject: string): Promise<void> {
    checkName(subject, '/value');
    const id = groupJid(groupId);
    await (await this.withRole(session, id, 'admin')).setGroupSubject(id, subject);
  }

  async setDescription(session: string, groupId: string, description: string): Promise<void> {
    const id = groupJid(groupId);
    await (await this.withRole(session, id, 'admin')).setGroupDescription(id, description);
  }

  /** `caller`: whose share of the download pool a picture URL takes */
  async setPicture(session: string, groupId: string, input: { url?: string; base64?: string | StreamedBase64 }, caller?: Principal): Promise<void> {
    const id = groupJid(groupId);
    await this.withRole(session, id, 'admin');
    const picture = await loadPicture(input, forCaller(this.deps.mediaSource, caller));
    await (await this.engine(session)).setGroupPicture(id, picture);
  }

  async removePicture(session: string, groupId: string): Promise<void> {
    const id = groupJid(groupId);
    await (await this.withRole(session, id, 'admin')).setGroupPicture(id, null);
  }

  /** The picture's URL for members; 404 PICTURE_NOT_FOUND when the group has none. */
  async picture(session: string, groupId: string): Promise<{ id: string; url: string }> {
    const id = groupJid(groupId);
    const engine = await this.engine(session);
    await engine.getGroup(id);
    const url = await engine.getProfilePicture(id);
    if (!url) throw new GatewayError('PICTURE_NOT_FOUND', `group ${groupId} has no picture`);
    return { id, url };
  }

  /** add/remove need an admin, promote/demote the creator (super admin); each participant gets its own result. */
  async updateParticipants(session: string, groupId: string, action: ParticipantAction, participants: string[]): Promise<{ id: string; results: ParticipantResult[] }> {
    checkCount(participants);
    const jids = participantJids(participants);
    const id = groupJid(groupId);
    const engine = await this.withRole(session, id, action === 'add' || action === 'remove' ? 'admin' : 'super');
    const outcomes = await engine.updateParticipants(id, action, jids);
    return { id, results: outcomes.map((o) => resultOf(action, o)) };
  }

  async invite(session: string, groupId: string): Promise<{ code: string; url: string }> {
    const id = groupJid(groupId);
    const code = await (await this.withRole(session, id, 'admin')).getInviteCode(id);
    return { code, url: INVITE_BASE_URL + code };
  }

  async revokeInvite(session: string, groupId: string): Promise<{ code: string; url: string }> {
    const id = groupJid(groupId);
    const code = await (await this.withRole(session, id, 'admin')).revokeInviteCode(id);
    return { code, url: INVITE_BASE_URL + code };
  }

  /** What the code opens; the session does not join. */
  async preview(session: string, code: string): Promise<InvitePreviewView> {
    return previewView(await (await this.engine(session)).getInviteInfo(inviteCode(code, '/inviteCode')));
  }

  async join(session: string, code: string): Promise<GroupView> {
    const engine = await this.engine(session);
    const id = await engine.acceptInvite(inviteCode(code, '/code'));
    return groupView(await engine.getGroup(id));
  }

  // ---- internals ----

  private async engine(session: string): Promise<EngineSession> {
    return await this.deps.sessions.connected(session);
  }

  /** The session's rights in the group, checked here so every engine answers with the same codes. */
  private async withRole(session: string, groupId: string, needed: 'admin' | 'super'): Promise<EngineSession> {
    const engine = await this.engine(session);
    const group = await engine.getGroup(groupId);
    const row = await this.deps.sessions.get(session);
    const me = group.participants.find((p) => (row.phoneNumber && p.phoneNumber === row.phoneNumber) || (row.lid && p.lid === row.lid));
    if (!me) throw new GatewayError('NOT_GROUP_MEMBER', `session ${session} is not a member of ${groupId}`);
    if (needed === 'super' && !me.isSuperAdmin) throw new GatewayError('NOT_GROUP_SUPER_ADMIN', `only the creator (super admin) of ${groupId} can do this`);
    if (needed === 'admin' && !me.isAdmin && !me.isSuperAdmin) throw new GatewayError('NOT_GROUP_ADMIN', `only admins of ${groupId} can do this`);
    return engine;
  }
}

function checkName(name: string, path: string): void {
  if (name.trim() === '') throw ValidationError.field(path, 'must not be blank');
  if ([...name].length > GROUP_NAME_MAX) throw ValidationError.field(path, `must be at most ${GROUP_NAME_MAX} characters`);
}

function checkCount(participants: string[]): void {
  if (participants.length > GROUP_PARTICIPANTS_MAX) throw ValidationError.field('/participants', `must have at most ${GROUP_PARTICIPANTS_MAX} items`);
}

function participantView(p: GroupMemberInfo): ParticipantView {
  return { ...(p.phoneNumber ? { phoneNumber: p.phoneNumber } : {}), ...(p.lid ? { lid: p.lid } : {}), isAdmin: p.isAdmin, isSuperAdmin: p.isSuperAdmin };
}

export function groupView(group: GroupInfo): GroupView {
  return {
    id: group.id,
    name: group.subject,
    description: group.description,
    ...(group.ownerLid ? { ownerLid: group.ownerLid } : {}),
    createdAt: group.createdAt,
    participants: group.participants.map(participantView),
  };
}

function previewView(info: InviteInfo): InvitePreviewView {
  return {
    id: info.id,
    subject: info.subject,
    size: info.size,
    createdAt: info.createdAt,
    ...(info.creatorLid ? { creatorLid: info.creatorLid } : {}),
    participants: info.participants.map(participantView),
  };
}

function resultOf(action: ParticipantAction, outcome: ParticipantOutcome): ParticipantResult {
  if (outcome.ok) return { participant: outcome.jid, status: DONE_STATUS[action] };
  return { participant: outcome.jid, status: 'failed', error: { code: outcome.failure ?? 'FAILED', message: outcome.message ?? `could not ${action} the participant` } };
}
