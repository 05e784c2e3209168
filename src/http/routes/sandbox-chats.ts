// Sandbox control routes for presence, calls, contact profiles, groups and chat state (DESIGN §6): virtual contacts act on a sandbox session.
import { GatewayError, ValidationError } from '../../errors.js';
import { jidKind, jidUser, normalizeJid, phoneDigits } from '../../engine/jid.js';
import type { SandboxChats } from '../../engine/sandbox/chats.js';
import type { GroupAction } from '../../engine/sandbox/groups.js';
import type { ParticipantAction } from '../../engine/types.js';
import { groupView } from '../../chats/groups.js';
import { callParams } from '../schemas/calls.js';
import { sessionParams } from '../schemas/common.js';
import { sandboxCallBody, sandboxChatBody, sandboxContactBody, sandboxGroupBody, sandboxPresenceBody } from '../schemas/sandbox-chats.js';
import type { SessionManager } from '../../sessions/manager.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';
import { sandboxSession } from './sandbox.js';

async function openChats(sessions: SessionManager, name: string): Promise<SandboxChats> {
  const chats = (await sandboxSession(sessions, name)).chats;
  if (!chats) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${name} is not connected`);
  return chats;
}

export function sandboxChatRoutes({ sessions }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/presence',
      operationId: 'sandboxPresence',
      responses: { 200: { data: ref('SandboxPresence') } },
      access: 'master',
      summary: 'a contact\'s presence changes (availability reaches subscribers; chat states reach the chat)',
      schema: { params: sessionParams, body: sandboxPresenceBody },
      async handler({ params, body }) {
        const chats = await openChats(sessions, params.session);
        const lastSeen = body.lastSeen === undefined ? undefined : unixSeconds(body.lastSeen);
        const delivered = chats.presence.contactPresence(numberOf(body.from, '/from'), body.presence, lastSeen, body.chatId);
        return { delivered };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/call',
      operationId: 'sandboxCall',
      responses: { 200: { data: ref('SandboxCall') } },
      access: 'master',
      summary: 'a contact calls the session (received), or a call that rings ends: missed, cancelled by its caller, accepted or rejected on the phone',
      schema: { params: sessionParams, body: sandboxCallBody },
      async handler({ params, body }) {
        const callId = (await openChats(sessions, params.session)).call(numberOf(body.from, '/from'), body.outcome, { callId: body.callId, isVideo: body.isVideo });
        return { callId };
      },
    },
    {
      method: 'GET',
      path: '/api/sandbox/sessions/:session/calls/:callId',
      operationId: 'sandboxGetCall',
      responses: { 200: { data: ref('SandboxCallView') } },
      access: 'master',
      summary: "a call placed to the session, as its caller's phone shows it (whether a reject reached the caller)",
      schema: { params: callParams },
      async handler({ params }) {
        return (await openChats(sessions, params.session)).callerView(params.callId);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/contacts',
      operationId: 'sandboxUpdateContact',
      responses: { 200: { data: ref('SandboxContact') } },
      access: 'master',
      summary: 'a number changes its profile (names, picture, hiding the picture) or the session saves it under a name; contact.update follows',
      schema: { params: sessionParams, body: sandboxContactBody },
      async handler({ params, body }) {
        const { phoneNumber, ...patch } = body;
        const info = (await openChats(sessions, params.session)).contacts.changeProfile(numberOf(phoneNumber, '/phoneNumber'), patch);
        return { id: info.jid, phoneNumber: info.phoneNumber, lid: info.lid };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/groups',
      operationId: 'sandboxGroupAction',
      responses: { 200: { data: ref('SandboxGroupAction') } },
      access: 'master',
      summary: 'a virtual contact joins by invite code, leaves, renames, or changes participants of a group, with the rights it has there',
      schema: { params: sessionParams, body: sandboxGroupBody },
      async handler({ params, body }) {
        const chats = await openChats(sessions, params.session);
        const result = chats.groupNetwork.act(numberOf(body.from, '/from'), groupAction(body));
        const visible = await chats.groups.getGroup(result.groupId).catch(() => undefined);
        return {
          groupId: result.groupId,
          ...(result.outcomes ? { results: result.outcomes.map((o) => ({ participant: o.jid, ok: o.ok, ...(o.failure ? { failure: o.failure } : {}) })) } : {}),
          ...(visible ? { group: groupView(visible) } : {}),
        };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/chats',
      operationId: 'sandboxChatAction',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: 'the phone archives, pins, mutes, reads, clears or deletes a chat; the chat.* event follows',
      schema: { params: sessionParams, body: sandboxChatBody },
      async handler({ params, body }) {
        const chatId = normalizeJid(body.chatId);
        if (!chatId) throw ValidationError.field('/chatId', 'is not a JID or phone number');
        (await openChats(sessions, params.session)).chatChanged(chatId, body.action, body.muteUntil);
        return done(`chat ${chatId}: ${body.action}`);
      },
    },
  ];
}

/** Phone digits of a number or user JID. */
function numberOf(text: string, path: string): string {
  const raw = text.trim();
  const digits = raw.includes('@') ? (jidKind(raw) === 'user' ? jidUser(raw) : null) : phoneDigits(raw);
  if (!digits) throw ValidationError.field(path, 'is not a phone number or user JID');
  return digits;
}

function unixSeconds(value: string | number): number {
  if (typeof value === 'number') return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw ValidationError.field('/lastSeen', 'is not an ISO 8601 time or Unix seconds');
  return Math.floor(ms / 1000);
}

function groupAction(body: { action: string; code?: string; groupId?: string; value?: string; participants?: string[] }): GroupAction {
  const need = <T>(value: T | undefined, field: string): T => {
    if (value === undefined) throw ValidationError.field(`/${field}`, `is required for ${body.action}`);
    return value;
  };
  switch (body.action) {
    case 'join':
      return { kind: 'join', code: need(body.code, 'code') };
    case 'leave':
      return { kind: 'leave', groupId: need(body.groupId, 'groupId') };
    case 'subject':
    case 'description':
      return { kind: body.action, groupId: need(body.groupId, 'groupId'), value: need(body.value, 'value') };
    default: {
      const participants = need(body.participants, 'participants').map((p, i) => {
        const jid = normalizeJid(p);
        if (!jid || (jidKind(jid) !== 'user' && jidKind(jid) !== 'lid')) throw ValidationError.field(`/participants/${i}`, 'is not a phone number, user JID or LID');
        return jid;
      });
      return { kind: body.action as ParticipantAction, groupId: need(body.groupId, 'groupId'), participants };
    }
  }
}
