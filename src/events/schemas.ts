// JSON Schemas (draft 2020-12, usable as OpenAPI 3.1 schemas) of the event envelope and of each event's payload: the
// contract behind docs/EVENTS.md. Shared pieces are defined once here and reused; closed payloads forbid extra fields.
// `#/components/schemas/…` references name the OpenAPI document's resources (src/http/schemas/resources.ts).
import { EVENT_TYPES, type EventType } from './catalogue.js';
import { CLOSE_CAUSE_CODES, IDENTITY_SOURCES } from '../engine/types.js';
import { FAILURE_REASONS } from '../engine/server-acks.js';
import { DECRYPTION_FAILURE_KINDS } from '../engine/decryption.js';
import { LOGOUT_REASONS } from '../engine/logouts.js';
import { HEALTH_REASONS, HEALTH_STEPS } from '../sessions/watchdog.js';

type Schema = Record<string, unknown>;

const SESSION_STATUSES = ['CONNECTING', 'CONNECTED', 'DISCONNECTED'] as const;
const STATUS_REASONS = ['SCAN_QR', 'AUTO_RECONNECT', 'FAILED', 'MANUAL_STOP', 'QR_TIMEOUT', 'LOGGED_OUT', 'TEMPORARY_BAN', 'STREAM_ERROR'] as const;
const MESSAGE_TYPES = ['text', 'image', 'video', 'voice', 'file', 'sticker', 'poll', 'location', 'contact'] as const;
const DELIVERY_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed'] as const;

/** An object whose listed properties are the only ones allowed. */
function closed(properties: Record<string, Schema>, required: string[] = Object.keys(properties), extra: Schema = {}): Schema {
  return { type: 'object', additionalProperties: false, required, properties, ...extra };
}

const id = { type: 'string', minLength: 1 } as const;
const jid = { type: 'string', minLength: 1, description: 'a WhatsApp JID (…@s.whatsapp.net, …@lid, …@g.us, …@newsletter)' } as const;
const isoTime = { type: 'string', format: 'date-time', description: 'ISO 8601' } as const;
const e164 = { type: 'string', pattern: '^\\+[1-9][0-9]{4,19}$', description: 'E.164' } as const;
const lid = { type: 'string', pattern: '@lid$' } as const;
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, 'null'] });
const nullableString: Schema = { type: ['string', 'null'] };

/** A person or chat as the network named it, with the phone number and LID when known. */
export const jidRefSchema: Schema = {
  title: 'JidRef',
  ...closed({ jid, phoneNumber: e164, lid }, ['jid']),
};

const label = closed({ id, name: { type: 'string' }, color: { type: 'integer', minimum: 0, description: 'palette index' } });

/** The result of a send: the OpenAPI document's resource (src/http/schemas/resources.ts), by reference. */
const sendResult: Schema = { $ref: '#/components/schemas/SendResult' };

const messageKey = { messageId: id, chatId: jid } as const;

/** `message.received` and `message.sent`: the message, its content fields present by type. */
export const messagePayloadSchema: Schema = {
  title: 'MessagePayload',
  ...closed(
    {
      ...messageKey,
      from: jidRefSchema,
      fromMe: { type: 'boolean' },
      isGroup: { type: 'boolean' },
      type: { enum: [...MESSAGE_TYPES] },
      timestamp: isoTime,
      text: { type: 'string' },
      caption: { type: 'string' },
      mediaId: { ...id, description: 'the media record (download, persist)' },
      mimeType: { type: 'string' },
      size: { type: 'integer', minimum: 0 },
      filename: { type: 'string' },
      mediaUrl: { type: 'string', description: 'S3 URL, when auto-persist saved the media' },
      ptt: { type: 'boolean' },
      quotedMessageId: id,
      mentions: { type: 'array', items: jid },
      isForwarded: { type: 'boolean' },
      poll: closed({ title: { type: 'string' }, options: { type: 'array', items: { type: 'string' } }, multiSelect: { type: 'boolean' } }),
      location: closed({ latitude: { type: 'number' }, longitude: { type: 'number' }, address: { type: 'string' }, name: { type: 'string' } }, ['latitude', 'longitude']),
      vcard: { type: 'string' },
      displayName: { type: 'string' },
      linkPreview: closed(
        { url: { type: 'string' }, title: { type: 'string' }, description: { type: 'string' }, thumbnail: { type: 'string', description: 'JPEG, base64' } },
        ['url', 'title'],
      ),
      status: { enum: [...DELIVERY_STATUSES], description: 'messages the session sent' },
    },
    ['messageId', 'chatId', 'from', 'fromMe', 'isGroup', 'type', 'timestamp'],
  ),
};

const messageSentSchema: Schema = { ...messagePayloadSchema, required: [...(messagePayloadSchema.required as string[]), 'status'] };

/** Reaction, edit and revoke share the message key, the author and fromMe. */
const byAuthor = (extra: Record<string, Schema>): Schema => closed({ ...messageKey, from: jidRefSchema, fromMe: { type: 'boolean' }, ...extra, timestamp: isoTime });

/**
 * A call.* payload: the call as it stands after what this event reports (`status`), who or what ended it (`endedBy`,
 * on call.rejected and call.missed), and when it started ringing.
 */
const callSchema = (status: string, endedBy?: readonly string[]): Schema =>
  closed(
    {
      callId: { ...id, description: 'the id the network gave the call; the reject route takes it' },
      from: jidRefSchema,
      chatId: { ...jid, description: 'the caller (by phone JID when known), or the group of a group call' },
      isVideo: { type: 'boolean' },
      isGroup: { type: 'boolean' },
      status: { const: status },
      ...(endedBy
        ? {
            endedBy: {
              enum: [...endedBy],
              description:
                'gateway: the reject route; auto: the session\'s config.calls.reject; device: declined on the phone or another linked device; caller: the caller hung up before an answer; timeout: nobody answered',
            },
          }
        : {}),
      offeredAt: { ...isoTime, description: 'when the call started ringing' },
      offline: { const: true, description: 'Baileys: the call reached the session from its offline queue (it rang while the session was offline)' },
      timestamp: { ...isoTime, description: 'when what this event reports happened' },
    },
    ['callId', 'from', 'chatId', 'isVideo', 'isGroup', 'status', ...(endedBy ? ['endedBy'] : []), 'offeredAt', 'timestamp'],
  );

const chatOnly: Schema = { ...closed({ chatId: jid, timestamp: isoTime }) };

const channelActions = ['created', 'followed', 'unfollowed', 'muted', 'unmuted', 'deleted'] as const;

const payloads: Record<EventType, Schema> = {
  'message.received': messagePayloadSchema,
  'message.sent': messageSentSchema,
  'message.ack': {
    ...closed({ ...messageKey, status: { enum: ['sent', 'delivered', 'read'] }, by: jidRefSchema, timestamp: isoTime }, ['messageId', 'chatId', 'status', 'timestamp']),
  },
  'message.failed': {
    ...closed(
      {
        ...messageKey,
        reason: { enum: [...FAILURE_REASONS], description: 'why (docs/API.md "Message status")' },
        code: { type: 'string', pattern: '^[0-9]{1,6}$', description: "the network's error code (the server ack's `error`), when it gave one" },
        detail: { type: 'string', description: 'more words on it, when there are any' },
        timestamp: isoTime,
      },
      ['messageId', 'chatId', 'reason', 'timestamp'],
    ),
  },
  'message.revoked': byAuthor({}),
  'message.reaction': byAuthor({ reaction: { type: 'string', description: 'empty: the reaction was removed' } }),
  'message.edited': byAuthor({ text: { type: 'string' } }),
  'message.update': { ...closed({ ...messageKey, starred: { type: 'boolean' }, timestamp: isoTime }) },
  'message.delete': { ...closed({ ...messageKey, timestamp: isoTime }) },
  'message.vote': {
    ...closed({ pollMessageId: id, chatId: jid, voter: jidRefSchema, selectedOptions: { type: 'array', items: { type: 'string' } }, timestamp: isoTime }),
  },
  'message.undecryptable': {
    ...closed({
      ...messageKey,
      sender: jidRefSchema,
      kind: { enum: [...DECRYPTION_FAILURE_KINDS], description: 'the first failure: bad_mac, no_session, invalid_prekey, spent_key, absent (no encrypted content), other' },
      retries: { type: 'integer', minimum: 0, description: 'retry receipts the session sent for it' },
      timestamp: isoTime,
    }),
  },
  'session.status': {
    ...closed({
      status: { enum: [...SESSION_STATUSES] },
      statusReason: { enum: [...STATUS_REASONS, null] },
      previousStatus: { enum: [...SESSION_STATUSES] },
      previousStatusReason: { enum: [...STATUS_REASONS, null] },
      lastError: closed({ code: { enum: [...CLOSE_CAUSE_CODES] }, message: { type: 'string' }, at: isoTime, logoutReason: { enum: [...LOGOUT_REASONS], description: 'when the network forced a logout' } }, ['code', 'message', 'at']),
    }, ['status', 'statusReason', 'previousStatus', 'previousStatusReason']),
  },
  'session.qr': {
    ...closed({
      qr: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'null' }], description: 'null in the event log (GET /api/events, a resumed stream): a QR holds keys and is never stored' },
      expiresAt: isoTime,
    }),
  },
  'session.connected': {
    ...closed(
      { phoneNumber: e164, pushName: { type: 'string' }, businessName: { type: 'string' }, platform: { enum: ['smba', 'consumer'] }, lid },
      ['phoneNumber', 'platform'],
    ),
  },
  'session.logged_out': { ...closed({ reason: { enum: ['LOGOUT', 'UNLINKED'] }, detail: { type: 'string' } }, ['reason']) },
  'session.health': {
    ...closed(
      {
        state: { enum: ['degraded', 'recovered'] },
        step: { enum: [...HEALTH_STEPS], description: 'degraded: the step taken; recovered: the step that brought frames back' },
        reason: { enum: [...HEALTH_REASONS], description: 'why the step was taken: the silence, or the step before it did not bring frames back' },
        lastFrameAt: { oneOf: [isoTime, { type: 'null' }], description: 'when the last frame came from the network (keep-alive answers included)' },
      },
      ['state', 'step', 'reason', 'lastFrameAt'],
    ),
  },
  'group.update': {
    ...closed(
      {
        id: jid,
        action: { enum: ['created', 'joined', 'deleted'] },
        by: jidRefSchema,
        newSubject: { type: 'string' },
        newDescription: { type: 'string' },
        pictureChanged: { const: true },
        inviteCodeChanged: { const: true },
        announce: { type: 'boolean', description: 'Baileys: only admins may send' },
        restrict: { type: 'boolean', description: 'Baileys: only admins may edit the group info' },
        memberAddMode: { type: 'boolean', description: 'Baileys: every member may add members' },
        joinApprovalMode: { type: 'boolean', description: 'Baileys: joining needs an admin approval' },
        ephemeralDuration: { type: 'integer', minimum: 0, description: 'Baileys: disappearing messages, seconds' },
      },
      ['id'],
    ),
  },
  'group.participant': {
    ...closed(
      {
        id: jid,
        action: { enum: ['add', 'remove', 'promote', 'demote', 'join', 'leave'] },
        joined: { type: 'array', items: jid },
        left: { type: 'array', items: jid },
        promoted: { type: 'array', items: jid },
        demoted: { type: 'array', items: jid },
        participants: { type: 'array', items: jidRefSchema },
        by: jidRefSchema,
      },
      ['id', 'action', 'joined', 'left', 'promoted', 'demoted', 'participants'],
    ),
  },
  'presence.update': {
    ...closed(
      {
        from: jidRefSchema,
        sender: jidRefSchema,
        presence: { enum: ['available', 'unavailable', 'composing', 'recording'] },
        state: { enum: ['composing', 'paused'] },
        unavailable: { type: 'boolean' },
        lastSeen: { type: 'integer', minimum: 0, description: 'Unix seconds' },
        media: { const: 'audio' },
      },
      ['from', 'presence', 'state', 'unavailable'],
    ),
  },
  'call.received': callSchema('ringing'),
  'call.missed': callSchema('missed', ['caller', 'timeout']),
  'call.accepted': callSchema('accepted'),
  'call.rejected': callSchema('rejected', ['gateway', 'auto', 'device']),
  'contact.update': {
    description: 'the sandbox sends every field (null when unknown); Baileys sends the fields the network reported',
    ...closed(
      {
        id: jid,
        phoneNumber: nullable(e164),
        lid: nullable(lid),
        name: nullableString,
        savedName: nullableString,
        businessName: nullableString,
        pictureUrl: { ...nullableString, description: 'null: removed or hidden' },
      },
      ['id'],
    ),
  },
  'contact.identity': {
    description: 'a phone number ↔ LID pair the session learnt for the first time, or that changed; once per change',
    ...closed(
      {
        jid: { ...jid, description: 'the phone JID (…@s.whatsapp.net)' },
        phoneNumber: e164,
        lid,
        source: { enum: [...IDENTITY_SOURCES], description: 'where the session learnt it' },
        previousLid: { ...lid, description: 'the LID the number had before (a changed pair)' },
        previousPhoneNumber: { ...e164, description: 'the number the LID named before (a changed pair)' },
        timestamp: isoTime,
      },
      ['jid', 'phoneNumber', 'lid', 'source', 'timestamp'],
    ),
  },
  'chat.archive': { ...closed({ chatId: jid, archived: { type: 'boolean' }, timestamp: isoTime }) },
  'chat.mute': {
    ...closed({ chatId: jid, muted: { type: 'boolean' }, muteEndTime: { ...nullable(isoTime), description: 'null: for good, or unmuted' }, timestamp: isoTime }),
  },
  'chat.read': { ...closed({ chatId: jid, read: { type: 'boolean' }, timestamp: isoTime }) },
  'chat.pin': { ...closed({ chatId: jid, pinned: { type: 'boolean' }, timestamp: { ...isoTime, description: 'when it was pinned, or unpinned' } }) },
  'chat.clear': chatOnly,
  'chat.delete': chatOnly,
  'labels.update': {
    oneOf: [
      closed({ action: { enum: ['created', 'updated', 'deleted'] }, label }),
      closed({ action: { enum: ['assigned', 'unassigned'] }, labelId: id, chatId: jid }),
    ],
  },
  'newsletter.update': {
    oneOf: [
      closed({ id: jid, action: { enum: [...channelActions] }, name: { type: 'string' } }, ['id', 'action']),
      // Baileys only: what the network reports about a channel beyond the session's own relation to it
      closed({ id: jid, action: { const: 'reaction' }, serverId: { type: 'string' }, reaction: { type: 'object' } }, ['id', 'action']),
      closed({ id: jid, action: { const: 'view' }, serverId: { type: 'string' }, count: { type: 'integer', minimum: 0 } }, ['id', 'action']),
      closed({ id: jid, action: { const: 'participant' }, user: { type: 'string' }, role: { type: 'string' }, change: { type: 'string' } }, ['id', 'action']),
      closed({ id: jid, action: { const: 'settings' }, update: { type: 'object' } }, ['id', 'action']),
    ],
  },
  'blocklist.update': { ...closed({ action: { enum: ['blocked', 'unblocked'] }, jids: { type: 'array', items: jid } }) },
  'history.sync': {
    ...closed(
      {
        syncType: { type: 'string', minLength: 1, description: 'as the phone names it (the sandbox sends FULL; ON_DEMAND answers a history request)' },
        requestId: { type: 'string', minLength: 1, description: 'ON_DEMAND: the history request (POST …/chats/{chatId}/history) this batch answers, when it can be told' },
        chatId: { ...jid, description: 'ON_DEMAND: the chat of that request' },
        chunk: { type: 'integer', minimum: 0, description: 'the sandbox counts 1, 2, …; Baileys passes the phone\'s own chunk order' },
        progress: { type: ['integer', 'null'], minimum: 0, maximum: 100, description: '100 on the last chunk; null when the phone did not say' },
        messageCount: { type: 'integer', minimum: 0 },
        chatCount: { type: 'integer', minimum: 0 },
      },
      ['syncType', 'progress', 'messageCount', 'chatCount'],
    ),
  },
  'command.result': {
    oneOf: [
      closed({ commandId: id, success: { const: true }, result: sendResult }),
      closed({
        commandId: id,
        success: { const: false },
        error: closed(
          {
            code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$' },
            message: { type: 'string' },
            details: { type: 'array', items: closed({ path: { type: 'string' }, message: { type: 'string' } }), description: 'as in an HTTP error (a refused message: its /messageId, /reason and /code)' },
          },
          ['code', 'message'],
        ),
      }),
    ],
  },
};

const pascal = (type: string) => type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');

/** Each event's payload, titled after its event (`message.received` → MessageReceivedPayload) for generated clients. */
export const eventPayloadSchemas: Record<EventType, Schema> = Object.fromEntries(
  EVENT_TYPES.map((type): [EventType, Schema] => [type, { ...payloads[type], title: `${pascal(type)}Payload` }]),
) as Record<EventType, Schema>;

/** What webhooks receive and the live stream sends; `payload` is the event's payload schema. */
export const eventEnvelopeSchema: Schema = {
  title: 'EventEnvelope',
  ...closed({
    id: { ...id, description: 'webhooks: the delivery id (stable across retries); live stream: the event id' },
    event: { enum: [...EVENT_TYPES] },
    session: { type: 'string', minLength: 1 },
    seq: { type: 'integer', minimum: 1, description: "the event's number in its session's event log: 1, 2, 3 … without gaps (GET /api/events)" },
    timestamp: isoTime,
    payload: { type: 'object' },
  }),
};

/** The envelope of one event type, its payload narrowed to that event's schema. */
export function eventEnvelopeSchemaFor(type: EventType): Schema {
  const { title: _title, properties, ...rest } = eventEnvelopeSchema as { title: string; properties: Record<string, Schema> };
  return { ...rest, properties: { ...properties, event: { const: type }, payload: eventPayloadSchemas[type] } };
}
