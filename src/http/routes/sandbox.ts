// Sandbox control routes (DESIGN §6): the simulated phone and network act on a sandbox session.
import { GatewayError, ValidationError } from '../../errors.js';
import { isSandboxSession, type SandboxSession } from '../../engine/sandbox/index.js';
import { jidKind, jidUser, normalizeJid, phoneDigits } from '../../engine/jid.js';
import type { SessionManager } from '../../sessions/manager.js';
import { emptyBody, sessionParams } from '../schemas/common.js';
import { burstBody, disconnectBody, historyBody, inboundBody, nackFaultBody, noAckFaultBody, olderHistoryBody, pairBody, retryReceiptsFaultBody, silenceBody, undecryptableFaultBody } from '../schemas/sandbox.js';
import { MAX_ARMED_FAULTS, type SendFault } from '../../engine/sandbox/faults.js';
import { SEND_RULES } from '../schemas/messages.js';
import { buildContent, checkContentFields, checkMentions, type ContentFields } from '../../messages/content.js';
import { newMessageId, type ContactAction } from '../../engine/sandbox/messenger.js';
import type { OutgoingContent } from '../../engine/types.js';
import { done } from '../respond.js';
import type { Services } from '../services.js';
import { ref } from '../schemas/resources.js';
import type { RouteDef } from '../types.js';

export async function sandboxSession(sessions: SessionManager, name: string): Promise<SandboxSession> {
  if ((await sessions.engineOf(name)) !== 'sandbox') throw new GatewayError('SANDBOX_ONLY', `session ${name} does not run on the sandbox engine`);
  const engine = await sessions.running(name);
  if (!isSandboxSession(engine)) throw new GatewayError('SANDBOX_ONLY', `session ${name} does not run on the sandbox engine`);
  return engine;
}

async function connectedMessenger(sessions: SessionManager, name: string) {
  const messenger = (await sandboxSession(sessions, name)).messenger;
  if (!messenger) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${name} is not connected`);
  return messenger;
}

export function sandboxRoutes({ sessions, mediaSource }: Services): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/pair',
      operationId: 'sandboxPair',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: 'the simulated phone scans the QR (or enters the pairing code); with `history`, it then sends that seeded history once (history.sync)',
      schema: { params: sessionParams, body: pairBody },
      rulesBeyondSchema: [{ path: '/code', rule: 'must be the pairing code the session requested, when it requested one' }],
      async handler({ params, body }) {
        const sandbox = await sandboxSession(sessions, params.session);
        let digits: string | undefined;
        if (body?.phoneNumber !== undefined) {
          digits = phoneDigits(body.phoneNumber) ?? undefined;
          if (!digits) throw ValidationError.field('/phoneNumber', 'is not a valid E.164 number');
        }
        await sandbox.pair({ ...(body ?? {}), phoneNumber: digits });
        return done(`session ${params.session} paired`);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/inbound',
      operationId: 'sandboxInbound',
      responses: { 200: { data: { oneOf: [ref('SandboxMessage'), ref('Done')] }, description: '`{messageId}` for a message; success for an action on a message' } },
      access: 'master',
      summary: 'a virtual contact sends a message to the session, or reacts to, edits, revokes, reads or votes on one',
      schema: { params: sessionParams, body: inboundBody },
      rulesBeyondSchema: SEND_RULES,
      bodyLimit: 'media',
      async handler({ params, body }) {
        const messenger = await connectedMessenger(sessions, params.session);
        const from = contactDigits(body.from);
        const action = contactAction(body);
        if (action) {
          messenger.contactAction(from, action);
          return done(`${body.type} delivered`);
        }
        checkContentFields(body as ContentFields);
        const mentions = body.mentions ? checkMentions(body.mentions, body.text ?? body.caption) : undefined;
        const content = await buildContent(body as ContentFields, mediaSource);
        const quoted = body.quotedMessage ? { id: body.quotedMessage.messageId, chatId: body.chatId ?? '', fromMe: false } : undefined;
        const messageId = messenger.receiveFromContact(from, body.chatId, content, { ...(quoted ? { quoted } : {}), ...(mentions ? { mentions } : {}), ...(body.isForwarded ? { forwarded: true } : {}) }, body.senderLidOnly === true);
        return { messageId };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/inbound/burst',
      operationId: 'sandboxInboundBurst',
      responses: { 200: { data: ref('SandboxBurst') } },
      access: 'master',
      summary: 'virtual contacts send `count` text messages in a burst (load tests); answers when all were ingested',
      schema: { params: sessionParams, body: burstBody },
      async handler({ params, body }) {
        const started = performance.now();
        await (await connectedMessenger(sessions, params.session)).receiveBurst(body.count, body.contacts ?? 100);
        return { count: body.count, durationMs: Math.round(performance.now() - started) };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/history',
      operationId: 'sandboxHistorySync',
      responses: { 200: { data: ref('SandboxHistory') } },
      access: 'master',
      summary: 'the phone sends a history sync of `messages` messages across `chats` chats (history.sync events of 5,000 messages each), and `media` messages',
      schema: { params: sessionParams, body: historyBody },
      rulesBeyondSchema: [{ path: '/base64', rule: "each media item's base64 must be base64 of a file of its type's kind (the 400 names /base64)" }],
      bodyLimit: 'media',
      async handler({ params, body }) {
        const started = performance.now();
        const messenger = await connectedMessenger(sessions, params.session);
        const media: OutgoingContent[] = [];
        for (const item of body.media ?? []) {
          checkContentFields(item as ContentFields);
          media.push(await buildContent(item as ContentFields, mediaSource));
        }
        await messenger.syncHistory(body.messages, body.chats ?? 100, media);
        return { messages: body.messages, durationMs: Math.round(performance.now() - started) };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/history/older',
      operationId: 'sandboxSeedOlderHistory',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: "the phone holds these older messages of a chat (not synced): a history request (POST …/chats/{chatId}/history) gets those older than the chat's oldest stored message",
      schema: { params: sessionParams, body: olderHistoryBody },
      rulesBeyondSchema: [{ path: '/chatId', rule: 'must be a person or a group' }],
      async handler({ params, body }) {
        const messenger = await connectedMessenger(sessions, params.session);
        const chat = normalizeJid(body.chatId);
        if (!chat || (jidKind(chat) !== 'user' && jidKind(chat) !== 'group')) throw ValidationError.field('/chatId', 'must be a person or a group');
        const dayAgo = Date.now() - 86_400_000;
        const count = body.messages.length;
        messenger.holdOlder(
          chat,
          body.messages.map((m: { text: string; fromMe?: boolean; from?: string; timestamp?: string; id?: string }, i: number) => ({
            id: m.id ?? newMessageId(),
            fromMe: m.fromMe === true,
            ...(m.from && !m.fromMe ? { authorDigits: contactDigits(m.from) } : {}),
            text: m.text,
            timestamp: m.timestamp ? Date.parse(m.timestamp) : dayAgo - (count - 1 - i) * 60_000,
          })),
        );
        return done(`${count} older messages of ${chat} held by the phone`);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/faults/nack',
      operationId: 'sandboxFaultNack',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: "the network refuses the session's next `count` sends (to `chatId`, or any chat) with the ack error `code`: they are not delivered, and fail with its reason",
      schema: { params: sessionParams, body: nackFaultBody },
      async handler({ params, body }) {
        return armFault(await sandboxSession(sessions, params.session), { kind: 'nack', code: body.code }, body);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/faults/undecryptable',
      operationId: 'sandboxFaultUndecryptable',
      responses: { 200: { data: ref('SandboxMessage') } },
      access: 'master',
      summary: 'a virtual contact sends a message the session cannot decrypt; the session asks for it again, and the contact answers with a copy that decrypts (`recovered`) or never does (message.undecryptable)',
      schema: { params: sessionParams, body: undecryptableFaultBody },
      async handler({ params, body }) {
        const messenger = await connectedMessenger(sessions, params.session);
        const from = contactDigits(body.from);
        const content: OutgoingContent = { type: 'text', text: body.text ?? 'message sent again' };
        return { messageId: messenger.receiveUndecryptable(from, content, body.kind ?? 'bad_mac', body.recovered) };
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/faults/no-ack',
      operationId: 'sandboxFaultNoAck',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: "the network never acks the session's next `count` sends (to `chatId`, or any chat), nor delivers them, until …/faults/release: they stay pending, then fail with reason timeout",
      schema: { params: sessionParams, body: noAckFaultBody },
      async handler({ params, body }) {
        return armFault(await sandboxSession(sessions, params.session), { kind: 'no-ack' }, body ?? {});
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/faults/release',
      operationId: 'sandboxFaultRelease',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: 'the messages held back by a no-ack fault get their ack now and are delivered (a late ack: a message failed with timeout moves on)',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        const released = (await sandboxSession(sessions, params.session)).faults.release();
        return done(`${released} withheld messages acked and delivered`);
      },
    },
    {
      method: 'DELETE',
      path: '/api/sandbox/sessions/:session/faults',
      operationId: 'sandboxFaultsClear',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: 'disarms the faults armed and forgets the withheld messages (never acked: they fail with timeout)',
      schema: { params: sessionParams, body: emptyBody },
      async handler({ params }) {
        (await sandboxSession(sessions, params.session)).faults.clear();
        return done(`faults of ${params.session} cleared`);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/faults/retry-receipts',
      operationId: 'sandboxFaultRetryReceipts',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: "the recipient of the session's next sent message (to `chatId`, or to any chat) cannot decrypt it and asks for it again `count` times",
      schema: { params: sessionParams, body: retryReceiptsFaultBody },
      rulesBeyondSchema: [{ path: '/chatId', rule: 'must be a person or a group' }],
      async handler({ params, body }) {
        const sandbox = await sandboxSession(sessions, params.session);
        if (!sandbox.messenger) throw new GatewayError('SESSION_NOT_CONNECTED', `session ${params.session} is not connected`);
        let chat: string | undefined;
        if (body.chatId !== undefined) {
          chat = normalizeJid(body.chatId) ?? undefined;
          if (!chat || (jidKind(chat) !== 'user' && jidKind(chat) !== 'group')) throw ValidationError.field('/chatId', 'must be a person or a group');
        }
        sandbox.decryptionFaults.arm(chat, body.count);
        return done(`the next message sent${chat ? ` to ${chat}` : ''} is asked for again ${body.count} times`);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/disconnect',
      operationId: 'sandboxDisconnect',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: 'the network drops the session with a status reason, or logs it out for a classified reason (`logoutReason`)',
      schema: { params: sessionParams, body: disconnectBody },
      rulesBeyondSchema: [{ path: '/reason', rule: 'exactly one of reason and logoutReason' }],
      async handler({ params, body }) {
        if ((body.reason === undefined) === (body.logoutReason === undefined)) throw ValidationError.field('/reason', 'give exactly one of reason and logoutReason');
        const sandbox = await sandboxSession(sessions, params.session);
        if (body.logoutReason !== undefined) {
          await sandbox.logOut(body.logoutReason);
          return done(`session ${params.session} logged out (${body.logoutReason})`);
        }
        await sandbox.drop(body.reason!);
        return done(`session ${params.session} dropped with ${body.reason}`);
      },
    },
    {
      method: 'POST',
      path: '/api/sandbox/sessions/:session/faults/silence',
      operationId: 'sandboxSilence',
      responses: { 200: { data: ref('Done') } },
      access: 'master',
      summary: "the network stops sending the session anything (keep-alive answers included) while its connection stays open: the health watchdog's steps follow",
      schema: { params: sessionParams, body: silenceBody },
      async handler({ params, body }) {
        (await sandboxSession(sessions, params.session)).silenceNetwork(body.until);
        return done(`session ${params.session} silent until its next ${body.until}`);
      },
    },
  ];
}

function armFault(sandbox: SandboxSession, fault: SendFault, target: { chatId?: string; count?: number }) {
  let chat: string | undefined;
  if (target.chatId !== undefined) {
    chat = normalizeJid(target.chatId) ?? undefined;
    if (!chat) throw ValidationError.field('/chatId', 'is not a phone number or JID');
  }
  if (!sandbox.faults.arm(fault, chat, target.count ?? 1)) throw new GatewayError('LIMIT_REACHED', `at most ${MAX_ARMED_FAULTS} faults are armed at once; clear them (DELETE …/faults)`);
  return done(`the next ${target.count ?? 1} sends${chat ? ` to ${chat}` : ''} meet ${fault.kind === 'nack' ? `ack error ${fault.code}` : 'no ack'}`);
}

function contactDigits(raw: string): string {
  const from = raw.trim();
  const digits = from.includes('@') ? (jidKind(from) === 'user' ? jidUser(from) : null) : phoneDigits(from);
  if (!digits) throw ValidationError.field('/from', 'is not a phone number or user JID');
  return digits;
}

function contactAction(body: { type: string; messageId?: string; reaction?: string; text?: string; options?: string[] }): ContactAction | undefined {
  const need = <T>(value: T | undefined, field: string): T => {
    if (value === undefined) throw ValidationError.field(`/${field}`, `is required for ${body.type}`);
    return value;
  };
  switch (body.type) {
    case 'reaction':
      return { kind: 'reaction', messageId: need(body.messageId, 'messageId'), reaction: need(body.reaction, 'reaction') };
    case 'edit':
      return { kind: 'edit', messageId: need(body.messageId, 'messageId'), text: need(body.text, 'text') };
    case 'revoke':
    case 'read':
      return { kind: body.type, messageId: need(body.messageId, 'messageId') };
    case 'vote':
      return { kind: 'vote', messageId: need(body.messageId, 'messageId'), options: need(body.options, 'options') };
    default:
      return undefined;
  }
}
