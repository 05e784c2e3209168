// The event catalogue: the 31 event types of SPEC §6 and those the gateway added (contact.identity, chat.pin,
// message.failed, message.undecryptable, session.health), and the envelope shape.

export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.ack',
  'message.failed',
  'message.revoked',
  'message.reaction',
  'message.edited',
  'message.update',
  'message.delete',
  'message.vote',
  'message.undecryptable',
  'session.status',
  'session.qr',
  'session.connected',
  'session.logged_out',
  'session.health',
  'group.update',
  'group.participant',
  'presence.update',
  'call.received',
  'call.missed',
  'call.accepted',
  'call.rejected',
  'contact.update',
  'contact.identity',
  'chat.archive',
  'chat.mute',
  'chat.read',
  'chat.pin',
  'chat.clear',
  'chat.delete',
  'labels.update',
  'newsletter.update',
  'blocklist.update',
  'history.sync',
  'command.result',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const eventTypeSet: ReadonlySet<string> = new Set(EVENT_TYPES);

export function isEventType(value: string): value is EventType {
  return eventTypeSet.has(value);
}

/** A recorded event: what the bus carries and what webhook envelopes wrap. */
export interface GatewayEvent<P = Record<string, unknown>> {
  /** unique event id (a webhook delivery has its own id, see src/webhooks) */
  id: string;
  event: EventType;
  session: string;
  /** the event's number in its session's log: 1, 2, 3 … without gaps (0 where no log is kept, as in unit tests) */
  seq: number;
  /** ISO 8601 */
  timestamp: string;
  payload: P;
}

/** The webhook delivery envelope of DESIGN §3: `id` is the delivery id, stable across retries. */
export interface DeliveryEnvelope {
  id: string;
  event: EventType;
  session: string;
  seq: number;
  timestamp: string;
  payload: unknown;
}
