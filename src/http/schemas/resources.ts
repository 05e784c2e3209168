// Response schemas: one JSON Schema per resource the API answers with (the `data` of a response), reused by $ref.
// They become the OpenAPI document's components.schemas; routes name them with ref('Session'), listOf('Session').
// Resources are closed (additionalProperties: false) so that a field the code adds without documenting it is drift.
import { CLOSE_CAUSE_CODES, IDENTITY_SOURCES, STATUS_REASONS } from '../../engine/types.js';
import { FAILURE_REASONS } from '../../engine/server-acks.js';
import { LOGOUT_REASONS } from '../../engine/logouts.js';
import { RETRY_POLICY_NAMES } from '../../webhooks/retry-policy.js';
import { HEADER_VALUE_MASK } from '../../webhooks/registry.js';
import { SIGNATURE_SCHEMES } from '../../store/webhooks.js';
import { EVENT_TYPES } from '../../events/catalogue.js';
import { SCOPES } from '../../auth/scopes.js';
import { DECRYPTION_FAILURE_KINDS } from '../../engine/decryption.js';
import { ACTOR_KINDS, AUDIT_ACTIONS } from '../../audit/actions.js';
import { ACTIVITY_WINDOWS } from '../../ops/activity.js';
import { sessionName } from './common.js';

const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const jid = { type: 'string', description: 'a JID (`…@s.whatsapp.net`, `…@g.us`, `…@lid`, `…@newsletter`)' } as const;

/** An object schema whose listed properties are all required unless named in `optional`. */
function resource(description: string, properties: Record<string, object>, optional: string[] = []): object {
  return {
    type: 'object',
    description,
    additionalProperties: false,
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    properties,
  };
}

/** a reference between resources (typed `ref` below cannot be used inside the table it is typed by) */
const inner = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** the fields of every stored message, and of its detailed view */
const storedMessageFields = {
  messageId: str,
  chatId: jid,
  sender: { ...nullableStr, description: "the author's JID of a received message (in a 1:1 chat, the contact); null for the session's own messages" },
  senderPhoneNumber: { ...nullableStr, description: "the sender's phone number (E.164), when the gateway knows it; null for the session's own messages" },
  senderLid: { ...nullableStr, description: "the sender's LID (`…@lid`), when the gateway knows it; null for the session's own messages" },
  fromMe: bool,
  type: str,
  text: { ...nullableStr, description: 'the text or caption; null for other messages and deleted ones' },
  mediaId: { ...nullableStr, description: 'the media record of a media message' },
  quotedMessageId: nullableStr,
  status: { enum: ['pending', 'sent', 'delivered', 'read', 'failed', 'received'], description: 'a sent message: pending (no server ack yet), sent, delivered, read, or failed (see statusHistory and failure); a received one: received' },
  starred: bool,
  revoked: bool,
  edited: bool,
  timestamp: dateTime,
};

export const resourceSchemas = {
  Done: resource('a mutation without a result', { success: { const: true }, message: str }),
  Health: resource('liveness, version and session counts', {
    status: { const: 'ok' },
    version: str,
    uptime: { type: 'integer', minimum: 0, description: 'seconds since the daemon started' },
    sessions: resource('session counts', { total: int, connected: int }),
  }),
  Session: resource(
    'one linked WhatsApp account',
    {
      name: sessionName,
      engine: { enum: ['baileys', 'sandbox'] },
      status: { enum: ['CONNECTING', 'CONNECTED', 'DISCONNECTED'] },
      statusReason: { enum: [...STATUS_REASONS, null], description: 'null when the session was never started, or is connected' },
      phoneNumber: { type: 'string', description: 'E.164, once paired' },
      pushName: str,
      businessName: str,
      platform: { type: 'string', description: '`smba` (business) or `consumer`' },
      lid: str,
      proxy: { type: 'string', description: 'the proxy URL with its password masked as `***`' },
      config: { type: 'object', description: 'engine settings (`safeMode`, `markOnlineOnConnect`, `ignoreStatus`)' },
      lastError: {
        oneOf: [
          resource('why the connection last went down (kept after it reconnects, replaced by the next failure)', {
            code: { enum: [...CLOSE_CAUSE_CODES] },
            message: { type: 'string', description: 'the underlying error, with the network close code where there is one' },
            at: dateTime,
            logoutReason: {
              enum: [...LOGOUT_REASONS],
              description: 'when the network forced a logout: `unlinked` from the phone, `replaced` by another client, `banned`, `temporarily_banned`, `locked`, or `key_error` (the server rejected the keys)',
            },
          }, ['logoutReason']),
          { type: 'null' },
        ],
      },
      health: {
        enum: ['healthy', 'degraded', null],
        description: "the health watchdog's verdict: `degraded` from a silence until frames come back (also while its reconnect or restart runs); null when the session is not CONNECTED here",
      },
      lastFrameAt: { oneOf: [dateTime, { type: 'null' }], description: 'when the last frame came from WhatsApp (keep-alive answers included); null when the session has no connection here' },
      createdAt: dateTime,
      updatedAt: dateTime,
      decryption: resource(
        'decryption health since the daemon running the session started it (GET /api/sessions/{session} only): retry receipts, decryption failures by kind, exhausted retries',
        {
          retryReceiptsSent: { ...int, description: 'the session could not decrypt a message and asked its sender for it again' },
          retryReceiptsReceived: { ...int, description: 'a recipient could not decrypt a message of the session and asked for it again' },
          failures: resource(
            'messages that could not be decrypted, by the kind of their first failure',
            Object.fromEntries(DECRYPTION_FAILURE_KINDS.map((kind) => [kind, int])),
          ),
          retriesExhausted: resource('messages whose retries were exhausted', {
            incoming: { ...int, description: 'message.undecryptable events' },
            outgoing: { ...int, description: 'message.failed events with reason decryption_retry_exhausted' },
          }),
          since: { ...dateTime, description: 'when counting started' },
        },
      ),
    },
    ['phoneNumber', 'pushName', 'businessName', 'platform', 'lid', 'proxy', 'decryption'],
  ),
  PairingQr: resource(
    'the current pairing QR code',
    { qr: { type: 'string', description: 'the QR payload to draw' }, expiresAt: dateTime, image: { type: 'string', description: 'PNG data URI (with `format=image`)' } },
    ['image'],
  ),
  PairingCode: resource('an 8-character pairing code to enter on the phone', {
    code: { type: 'string', minLength: 8, maxLength: 8 },
    phoneNumber: { type: 'string', description: 'E.164' },
  }),
  ApiKey: resource(
    'an API key (its secret only in the create response)',
    {
      id: str,
      name: str,
      prefix: { type: 'string', description: 'the first characters of the key, to recognise it' },
      scopes: { type: 'array', items: { enum: [...SCOPES] } },
      sessions: { type: ['array', 'null'], items: sessionName, description: 'the sessions the key is limited to; null = all' },
      rateLimitPerMinute: { type: ['integer', 'null'], minimum: 1, description: 'requests a minute this key may make; null = unlimited' },
      governorExempt: { type: 'boolean', description: "the operator exempted the key's sends from the send governor (PATCH /api/admin/keys/{id})" },
      createdBy: { ...nullableStr, description: 'id of the API key that created this one; null = the operator (master key)' },
      createdAt: dateTime,
      lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
      key: { type: 'string', description: 'the key itself: only in the create response, shown once' },
    },
    ['key'],
  ),
  Account: resource(
    'who the calling key is, and what it may do',
    {
      kind: { enum: ['master', 'key'], description: '`master`: the master key, which may call every route' },
      id: { ...nullableStr, description: "the API key's id; null for the master key" },
      name: { ...nullableStr, description: "the API key's name; null for the master key" },
      scopes: { type: 'array', items: { enum: [...SCOPES] }, description: '`["*"]` for the master key (which also reaches the admin and sandbox routes)' },
      sessions: { type: ['array', 'null'], items: sessionName, description: 'the sessions the key is limited to; null = all' },
      rateLimitPerMinute: { type: ['integer', 'null'], minimum: 1, description: 'requests a minute this key may make; null = unlimited' },
    },
  ),
  StoredMessage: resource('a message the store holds (sent or received), without its media bytes', storedMessageFields),
  MessageDetail: resource(
    'a stored message with everything that happened to it since: acks with their times, reactions, poll votes, edits, and its media record',
    {
      ...storedMessageFields,
      acks: {
        type: 'array',
        description: "each status the message reached (a message the session sent), oldest first: the first time, and who gave it (a group's members each ack)",
        items: resource('an ack', { status: { enum: ['sent', 'delivered', 'read'] }, at: dateTime, by: { ...nullableStr, description: 'the JID that acked; null when none is named' } }),
      },
      statusHistory: {
        type: 'array',
        description: "a sent message's way, oldest first: `pending` when it was sent off, each status the first time it was reached, and each failure with its reason (a late ack after a `timeout` moves it on); empty for a received message",
        items: resource(
          'a status the message reached',
          {
            status: { enum: ['pending', 'sent', 'delivered', 'read', 'failed'] },
            at: dateTime,
            reason: { enum: [...FAILURE_REASONS], description: 'a failure: why (docs/API.md "Message status")' },
            code: { type: 'string', description: "a failure: the network's error code, when it gave one" },
            detail: { type: 'string', description: 'a failure: more words on it' },
          },
          ['reason', 'code', 'detail'],
        ),
      },
      failure: {
        oneOf: [
          { type: 'null' },
          resource(
            'the newest failure',
            { reason: { enum: [...FAILURE_REASONS] }, code: { type: 'string', description: "the network's error code, when it gave one" }, detail: str, at: dateTime },
            ['code', 'detail'],
          ),
        ],
        description: 'the newest failure of a sent message (it may have moved on since: `status` says where it is); null when none',
      },
      reactions: { type: 'array', description: 'the current reaction of each person', items: resource('a reaction', { from: jid, emoji: str, at: dateTime }) },
      votes: { type: 'array', description: "a poll's current vote of each person", items: resource('a poll vote', { voter: jid, selectedOptions: { type: 'array', items: str }, at: dateTime }) },
      edits: { type: 'array', description: 'every edit, oldest first (`text` holds the newest)', items: resource('an edit', { text: str, at: dateTime }) },
      media: { oneOf: [{ type: 'null' }, inner('MediaRecord')], description: 'the media record of a media message; null for others' },
      poll: resource('a poll: its question and options', { title: str, options: { type: 'array', items: str }, multiSelect: bool }),
      location: resource('a location', { latitude: { type: 'number' }, longitude: { type: 'number' }, address: str, name: str }, ['address', 'name']),
      vcard: { ...str, description: 'a contact card (vCard)' },
    },
    ['poll', 'location', 'vcard'],
  ),
  SendResult: resource(
    'a sent message',
    {
      messageId: str,
      status: { enum: ['sent', 'pending'], description: "`sent`: WhatsApp's server acked it within messages.sendAckWaitMs; `pending`: no answer yet (message.ack or message.failed follows). A refusal is an error (422 MESSAGE_REFUSED, 429 MESSAGE_RATE_LIMITED)" },
      timestamp: dateTime,
      chatId: jid,
      phoneNumber: { type: 'string', description: 'the target, when it is a person' },
      lid: str,
      mediaId: { type: 'string', description: 'the media record of a media message' },
      linkPreview: resource(
        'a text with a link (linkPreview not false): whether its preview went with it; `failed` sent the text without one',
        { status: { enum: ['sent', 'failed'] }, url: str, reason: { type: 'string', description: 'why the preview could not be built' } },
        ['reason'],
      ),
      statusViewers: { type: 'integer', minimum: 1, description: 'a status post: how many people it went to' },
    },
    ['phoneNumber', 'lid', 'mediaId', 'linkPreview', 'statusViewers'],
  ),
  PollVote: resource('a vote the session cast on a poll', {
    messageId: { type: 'string', description: 'the id of the vote message' },
    pollMessageId: str,
    chatId: jid,
    selectedOptions: { type: 'array', items: str, description: 'empty: the vote was withdrawn' },
    timestamp: dateTime,
  }),
  CommandAccepted: resource(
    'an accepted asynchronous command; its outcome arrives as a command.result event',
    {
      commandId: { type: 'string', format: 'uuid' },
      status: { enum: ['accepted', 'queued'], description: '`queued`: the send waits in the session\'s queue for its turn (the send governor)' },
      queueId: { type: 'string', format: 'uuid', description: 'a queued send: its queue entry (GET/DELETE /api/sessions/{session}/queue/{id})' },
      messageId: { type: 'string', description: 'a queued send: the id its message will have' },
      position: { type: 'integer', minimum: 1, description: 'a queued send: its place in the queue when it was queued (1: next)' },
    },
    ['queueId', 'messageId', 'position'],
  ),
  QueueEntry: resource('a send waiting in its session\'s queue (the send governor)', {
    id: { type: 'string', format: 'uuid' },
    position: { type: 'integer', minimum: 1, description: 'its place in the queue (1: next)' },
    messageId: { type: 'string', description: 'the id its message will have (chosen when it was queued)' },
    chatId: str,
    type: str,
    firstContact: { type: 'boolean', description: 'to a person who never wrote to the session (counted by the daily first-contact cap)' },
    commandId: { ...nullableStr, description: 'the command id its command.result will name (a `Prefer: respond-async` send); null: a request waits for it' },
    queuedAt: dateTime,
  }),
  ClientToken: resource('a minted client token', {
    token: { type: 'string', pattern: '^svc_ct_' },
    expiresAt: dateTime,
    session: sessionName,
    ephemeralId: str,
  }),
  ClientRules: resource('the client rules of a session', {
    session: sessionName,
    recipientMode: { enum: ['none', 'conversation', 'any'] },
    enabled: bool,
    allowedActions: { type: 'string', description: 'comma-separated client actions' },
    rateLimitPerMinute: { type: 'integer', minimum: 0 },
    dailySendCap: { type: 'integer', minimum: 0 },
    allowedOrigins: { type: 'string', description: 'comma-separated origins; empty = any' },
    updatedAt: dateTime,
  }),
  MediaRecord: resource(
    'a media file sent or received (without its bytes)',
    {
      id: str,
      messageId: str,
      session: sessionName,
      mimeType: str,
      size: { type: ['integer', 'null'], description: 'bytes; null when unknown' },
      filename: str,
      persisted: bool,
      s3Url: str,
      createdAt: dateTime,
    },
    ['filename', 's3Url'],
  ),
  PersistResult: resource('a media file uploaded to S3', {
    url: str,
    key: str,
    bucket: str,
    size: { type: ['integer', 'null'] },
    mimeType: str,
  }),
  Settings: resource('run-time settings (the S3 secret is never returned)', {
    s3: {
      oneOf: [
        { type: 'null' },
        resource(
          'S3-compatible storage',
          {
            endpoint: str,
            region: str,
            bucket: str,
            accessKeyId: str,
            forcePathStyle: bool,
            keyPrefix: str,
            publicBaseUrl: str,
            presignExpiresSeconds: int,
            secretAccessKeySet: bool,
          },
          ['endpoint', 'publicBaseUrl'],
        ),
      ],
    },
    autoPersist: bool,
  }),
  Webhook: resource(
    'a webhook (its hmacKey only in the create response)',
    {
      id: { type: 'integer', minimum: 1 },
      url: str,
      events: { type: 'array', items: { enum: [...EVENT_TYPES] }, description: '[] = every event' },
      session: { ...nullableStr, description: 'only events of this session; null = every session' },
      enabled: bool,
      headers: {
        type: 'array',
        items: resource('a custom header; its value is never shown', { name: str, value: { const: HEADER_VALUE_MASK, description: 'always masked' } }),
      },
      retries: resource('retry policy', { attempts: int, delaySeconds: int, policy: { enum: [...RETRY_POLICY_NAMES] } }),
      signatureScheme: { enum: [...SIGNATURE_SCHEMES], description: '`body`: HMAC of the body; `timestamp.body`: HMAC of `<X-Webhook-Timestamp>.<body>`' },
      createdAt: dateTime,
      updatedAt: dateTime,
      hmacKey: { type: 'string', description: 'the signing key: only in the create response' },
    },
    ['hmacKey'],
  ),
  Delivery: resource(
    'one delivery of an event to a webhook',
    {
      id: { type: 'string', description: 'the delivery id (envelope `id`, `X-Webhook-Id`)' },
      eventId: str,
      event: { enum: [...EVENT_TYPES] },
      session: str,
      status: { enum: ['pending', 'succeeded', 'failed'] },
      attempts: int,
      lastStatusCode: { type: ['integer', 'null'] },
      lastError: nullableStr,
      nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
      createdAt: dateTime,
      updatedAt: dateTime,
      body: { type: 'string', description: 'the JSON body the delivery POSTs (only when one delivery is fetched)' },
    },
    ['body'],
  ),
  Cluster: resource('the nodes of a cluster on one PostgreSQL database (store.kind: postgres), alive now', {
    node: { type: 'string', description: 'the node that answered' },
    leaseSeconds: int,
    nodes: {
      type: 'array',
      items: resource('a node', {
        id: str,
        url: { type: 'string', description: 'where the other nodes reach it (cluster.advertiseUrl)' },
        startedAt: dateTime,
        heartbeatAt: dateTime,
        sessions: { type: 'array', items: sessionName, description: 'the sessions it runs (holds a live lease on), by name' },
      }),
    },
  }),
  Backup: resource(
    'a backup in <dataDir>/backups: a consistent copy of gateway.db (secrets still sealed under the data key)',
    {
      name: { type: 'string', description: '`gateway-<UTC time>.db`' },
      path: { type: 'string', description: "the file's path on the daemon's host" },
      sizeBytes: int,
      createdAt: dateTime,
      durationMs: { type: 'integer', description: 'how long the copy took (only when just taken)' },
      schemaVersion: { type: 'integer', description: 'the schema version of the copy (only when just taken)' },
      media: {
        oneOf: [
          { type: 'null' },
          resource('the media blobs copied with it', { path: { type: 'string', description: '`<backup path>-media`' }, files: int, sizeBytes: int }),
        ],
      },
    },
    ['durationMs', 'schemaVersion'],
  ),
  OperationsStatus: resource('what an operator checks: sessions needing attention, webhook backlog, database, S3, backups', {
    version: str,
    uptimeSeconds: int,
    schemaVersion: { type: 'integer', description: 'the schema version of the database (this build\'s latest)' },
    database: resource('the database file', { path: str, sizeBytes: int, walBytes: int }),
    sessions: resource('sessions by status', {
      total: int,
      byStatus: { type: 'object', additionalProperties: int, description: 'count per status (CONNECTED, CONNECTING, DISCONNECTED)' },
      attention: {
        type: 'array',
        description: 'CONNECTING (pairing or reconnecting) or down after FAILED or TEMPORARY_BAN, oldest change first (at most 100)',
        items: resource('a session that may need the operator', {
          name: sessionName,
          status: { enum: ['CONNECTING', 'CONNECTED', 'DISCONNECTED'] },
          statusReason: { enum: [...STATUS_REASONS, null] },
          since: { ...dateTime, description: 'the last change of the session row' },
        }),
      },
    }),
    webhooks: resource('the delivery backlog', {
      pendingDeliveries: int,
      oldestPendingAt: { type: ['string', 'null'], format: 'date-time' },
      failing: {
        type: 'array',
        description: 'enabled webhooks whose deliveries failed attempts since their last success, longest failing first (at most 100)',
        items: resource('a failing webhook', {
          id: int,
          url: str,
          since: { ...dateTime, description: 'when the oldest delivery that failed since the last success was recorded' },
          deliveries: { type: 'integer', description: 'deliveries that failed an attempt since then' },
          lastStatusCode: { type: ['integer', 'null'] },
          lastError: nullableStr,
        }),
      },
    }),
    s3: resource(
      'the S3 storage, when configured',
      { configured: bool, reachable: { type: ['boolean', 'null'], description: 'null when not configured' }, error: str },
      ['error'],
    ),
    backups: resource('backups in <dataDir>/backups', {
      count: int,
      last: { oneOf: [{ type: 'null' }, inner('Backup')] },
      schedule: { type: 'string', description: 'backup.schedule' },
    }),
  }),
  Activity: resource('counts per minute over a recent window, oldest minute first (the console overview charts)', {
    window: { enum: Object.keys(ACTIVITY_WINDOWS) },
    bucketSeconds: { const: 60 },
    from: { ...dateTime, description: 'the start of the first minute' },
    to: { ...dateTime, description: 'the end of the last minute (the current one, still counting)' },
    messagesIn: { type: 'array', items: int, description: 'messages received, by their timestamp' },
    messagesOut: { type: 'array', items: int, description: 'messages sent, by their timestamp' },
    deliveriesSucceeded: { type: 'array', items: int, description: 'webhook deliveries that succeeded, by when' },
    deliveriesFailed: { type: 'array', items: int, description: 'webhook deliveries that failed for good (retries spent), by when' },
    totals: resource('the sums of the four series', { messagesIn: int, messagesOut: int, deliveriesSucceeded: int, deliveriesFailed: int }),
    webhooks: {
      type: 'array',
      description: 'every webhook (at most 1000, by id) with its deliveries that failed for good in the window',
      items: resource('a webhook and its failures', { id: int, url: str, enabled: bool, failed: int }),
    },
  }),
  Participant: resource(
    'a group participant',
    { phoneNumber: str, lid: str, isAdmin: bool, isSuperAdmin: { type: 'boolean', description: 'the creator' } },
    ['phoneNumber', 'lid'],
  ),
  ParticipantResult: resource(
    'the outcome for one participant of a participants request',
    {
      participant: jid,
      status: { enum: ['added', 'removed', 'promoted', 'demoted', 'failed'] },
      error: resource('why it failed', { code: str, message: str }),
    },
    ['error'],
  ),
  Group: resource(
    'a group with its participants (`results` only in the create response)',
    {
      id: jid,
      name: str,
      description: str,
      ownerLid: str,
      createdAt: { type: 'integer', description: 'Unix seconds' },
      participants: { type: 'array', items: inner('Participant') },
      results: { type: 'array', items: inner('ParticipantResult') },
    },
    ['ownerLid', 'results'],
  ),
  ParticipantResults: resource('per-participant outcomes', { id: jid, results: { type: 'array', items: inner('ParticipantResult') } }),
  Invite: resource('a group invite', { code: str, url: { type: 'string', format: 'uri' } }),
  InvitePreview: resource(
    'the group an invite code opens',
    {
      id: jid,
      subject: str,
      size: int,
      createdAt: { type: 'integer', description: 'Unix seconds' },
      creatorLid: str,
      participants: { type: 'array', items: inner('Participant') },
    },
    ['creatorLid'],
  ),
  Channel: resource('a channel (newsletter)', {
    channelId: { ...jid, description: 'the channel JID (`…@newsletter`), the {channelId} of its paths' },
    lid: { ...jid, deprecated: true, description: 'the same value as channelId, under its first name; kept for old clients' },
    name: str,
    description: str,
    profileUrl: nullableStr,
    followers: int,
    muted: bool,
    preview: { type: 'boolean', description: 'the session neither owns nor follows it' },
    role: { enum: ['owner', 'follower', 'guest'] },
  }),
  Chat: resource('a chat of the session, as its list shows it', {
    chatId: jid,
    name: { ...nullableStr, description: "the contact's name, else the chat's own (a group's subject, the name a history sync gave it), else the phone number; null for a group or channel whose name the gateway has not stored" },
    isGroup: bool,
    phoneNumber: { ...nullableStr, description: 'E.164, for a chat with a person whose number the gateway knows' },
    lid: { ...nullableStr, description: 'the LID (`…@lid`), for a chat with a person whose LID the gateway knows' },
    lastMessage: {
      oneOf: [
        { type: 'null' },
        resource('the newest stored message of the chat', {
          messageId: str,
          type: str,
          text: { ...nullableStr, description: 'the text or caption, its first 200 characters; null for other messages' },
          timestamp: dateTime,
          fromMe: bool,
          status: { enum: ['received', 'pending', 'sent', 'delivered', 'read', 'failed'] },
        }),
      ],
    },
    unreadCount: { ...int, minimum: 0 },
    archived: bool,
    pinned: bool,
    muted: bool,
    muteEndTime: { type: ['string', 'null'], format: 'date-time', description: 'until when it is muted; null when not muted or muted for good' },
    labels: { type: 'array', items: str, description: 'the ids of its labels' },
  }),
  HistoryPage: resource("a page of a chat's stored messages, oldest first", {
    messages: { type: 'array', items: inner('MessageDetail') },
    nextBefore: { ...nullableStr, description: 'the `before` of the page of older messages; null when none are older' },
    nextAfter: { ...nullableStr, description: 'the `after` of the page of newer messages (null when the chat has none stored)' },
  }),
  HistoryRequest: resource('a history request sent to the phone', {
    requestId: { ...str, description: 'named by the history.sync events that answer it' },
    chatId: jid,
    count: { ...int, minimum: 1, maximum: 50, description: 'how many older messages were asked for' },
    before: resource('the oldest stored message of the chat: the messages asked for are older', { messageId: str, timestamp: dateTime }),
  }),
  SearchResults: resource('messages whose text has every word asked, newest first', {
    results: {
      type: 'array',
      items: resource('a message found', { message: inner('MessageDetail'), snippet: { ...str, description: 'the text around the first word found' } }),
    },
  }),
  ChatPage: resource('a page of the chat list, by last activity', {
    chats: { type: 'array', items: inner('Chat') },
    nextCursor: { ...nullableStr, description: 'the `cursor` of the next page; null on the last one' },
  }),
  Presence: resource(
    'the last-known presence of a contact',
    { chatId: jid, presence: { enum: ['available', 'unavailable', 'composing', 'recording'] }, lastSeen: dateTime },
    ['lastSeen'],
  ),
  Contact: resource('a contact; null when unknown', {
    id: jid,
    phoneNumber: nullableStr,
    name: nullableStr,
    savedName: nullableStr,
    businessName: nullableStr,
    lid: nullableStr,
    pictureUrl: nullableStr,
  }),
  AuditEntry: resource(
    'one admin action: who, what, when, the request and its outcome (never a secret)',
    {
      id: int,
      at: dateTime,
      actor: resource(
        'who acted: the master key, an API key (its id and name then), a client token (its id and ephemeral id), or the daemon itself',
        { kind: { enum: [...ACTOR_KINDS] }, id: str, name: str },
        ['id', 'name'],
      ),
      action: { enum: [...AUDIT_ACTIONS] },
      target: { ...nullableStr, description: 'what was acted on: a session name, webhook id or key id; null when none (settings) or unknown' },
      requestId: { ...nullableStr, description: 'the X-Request-Id of the request' },
      outcome: { enum: ['succeeded', 'failed'] },
      status: { type: ['integer', 'null'], description: 'the HTTP status answered' },
      errorCode: { type: 'string', description: 'the error code of a failed action' },
      details: { type: 'object', description: 'particulars that are not secret: a key\'s name and scopes, the names of the fields a change named' },
      count: { type: 'integer', minimum: 1, description: 'how many times it happened: a refusal the same caller repeats (same action and error code) within a minute of the first is counted in one entry' },
      lastAt: { ...dateTime, description: 'when the last of `count` repeats happened (`at` is the first); absent when count is 1' },
    },
    ['errorCode', 'details', 'lastAt'],
  ),
  Identity: resource('the phone number and LID of one person', {
    id: { ...jid, description: 'the id as asked, normalised (a phone JID or a LID)' },
    jid: { ...jid, description: 'the phone JID: the id the gateway stores the person\'s chat and messages under' },
    phoneNumber: { type: 'string', description: 'E.164' },
    lid: { type: 'string', description: 'the LID (`…@lid`)' },
    source: { enum: [...IDENTITY_SOURCES, null], description: 'where the session learnt the pair (as in `contact.identity`; `lookup` for one asked of the network by this request); null when not recorded (pairs stored by an older version)' },
    learntAt: { type: ['string', 'null'], format: 'date-time', description: 'when the session learnt the pair, or it last changed; null when not recorded' },
    seenAt: { type: ['string', 'null'], format: 'date-time', description: 'when the session last stored the pair (refreshed at most hourly while it keeps being seen); null for a pair just asked of the network' },
  }),
  ContactCheck: resource('whether a phone number is registered', { phoneNumber: str, registered: bool, lid: str }, ['lid']),
  ContactPicture: resource('a profile picture', { id: jid, url: str }),
  Label: resource('a label of a business account', {
    id: { type: 'string', pattern: '^[0-9]+$' },
    name: str,
    color: { type: 'integer', minimum: 0, maximum: 19 },
  }),
  LabelChats: resource('every chat that has the label now', { labelId: str, chatIds: { type: 'array', items: jid } }),
  SandboxMessage: resource('a message a virtual contact sent', { messageId: str }),
  SandboxBurst: resource('a burst of inbound messages', { count: int, durationMs: int }),
  SandboxHistory: resource('a history sync', { messages: int, durationMs: int }),
  SandboxPresence: resource('whether this session was told', { delivered: bool }),
  SandboxCall: resource('a call', { callId: str }),
  SandboxCallView: resource('a call placed to the session, as its caller sees it', {
    callId: str,
    from: str,
    isVideo: bool,
    offeredAt: str,
    callerSaw: { enum: ['ringing', 'accepted', 'rejected', 'missed'], description: "what the caller's phone shows: `rejected` once a reject reached it" },
  }),
  SandboxContact: resource('a virtual contact', { id: jid, phoneNumber: str, lid: str }),
  SandboxGroupAction: resource(
    'a virtual contact acted in a group',
    {
      groupId: jid,
      results: {
        type: 'array',
        items: resource('outcome per participant', { participant: jid, ok: bool, failure: str }, ['failure']),
      },
      group: inner('Group'),
    },
    ['results', 'group'],
  ),
} as const;

export type ResourceName = keyof typeof resourceSchemas;

/** A reference to a resource schema (components.schemas in the OpenAPI document). */
export function ref(name: ResourceName): { $ref: string } {
  return inner(name);
}

export function listOf(name: ResourceName): object {
  return { type: 'array', items: ref(name) };
}

/** The resource with some of its optional fields required (e.g. the API key with its secret, on create). */
export function withRequired(name: ResourceName, required: string[]): object {
  return { allOf: [ref(name), { required }] };
}
