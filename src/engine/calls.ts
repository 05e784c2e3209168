// The recent calls of one session, as both engines track them: who called (as the network names the caller, which a
// reject must echo), whether the call still rings, and the call.* payloads that tell what happened to it.
import { GatewayError } from '../errors.js';
import type { EventType } from '../events/catalogue.js';
import type { JidRef } from './jid.js';
import type { CallEndedBy, CallRejecter } from './types.js';

/** calls a session remembers at most: the oldest is forgotten first (a reject of it then answers CALL_NOT_FOUND) */
export const MAX_CALLS = 500;
/**
 * How long a call rings at most without the network saying how it ended. WhatsApp ends an unanswered call after about
 * 45 seconds; one still "ringing" past this limit is over (its end was lost with a connection), and a reject of it is
 * refused with CALL_ENDED rather than sent.
 */
export const RING_LIMIT_MS = 3 * 60_000;

export type CallStatus = 'ringing' | 'accepted' | 'rejected' | 'missed';

/** The call.* event of each status. */
export const CALL_EVENT: Record<CallStatus, EventType> = {
  ringing: 'call.received',
  accepted: 'call.accepted',
  rejected: 'call.rejected',
  missed: 'call.missed',
};

/** What the session knows of a call when it starts ringing. */
export interface OfferedCall {
  callId: string;
  /** the caller as the network named it (PN or LID jid, device part included): a reject is addressed to it */
  caller: string;
  from: JidRef;
  chatId: string;
  isVideo: boolean;
  isGroup: boolean;
  /** when it started ringing (ISO 8601) */
  offeredAt: string;
  offline?: boolean;
}

export interface TrackedCall extends OfferedCall {
  status: CallStatus;
  endedBy?: CallEndedBy;
  /** a reject of it is on its way to the network */
  rejecting?: boolean;
}

/** Bounded: MAX_CALLS calls per session, oldest first out. */
export class CallBook {
  private readonly calls = new Map<string, TrackedCall>();

  constructor(private readonly max = MAX_CALLS) {}

  get(callId: string): TrackedCall | undefined {
    return this.calls.get(callId);
  }

  /** Records a call that rings; undefined when the call is known already (a repeated offer), which reports nothing. */
  offer(call: OfferedCall): TrackedCall | undefined {
    if (this.calls.has(call.callId)) return undefined;
    const tracked: TrackedCall = { ...call, status: 'ringing' };
    this.calls.set(call.callId, tracked);
    if (this.calls.size > this.max) this.calls.delete(this.calls.keys().next().value!);
    return tracked;
  }

  /**
   * The call ended (or was answered): its new status, unless it had ended already or the session never heard it ring
   * (then undefined: nothing to report). A call the session is rejecting is not reported missed by the network's end
   * of it, which the reject itself causes.
   */
  end(callId: string, status: Exclude<CallStatus, 'ringing'>, endedBy?: CallEndedBy): TrackedCall | undefined {
    const call = this.calls.get(callId);
    if (!call || call.status !== 'ringing') return undefined;
    if (call.rejecting && status !== 'rejected') return undefined;
    call.status = status;
    call.rejecting = false;
    if (endedBy) call.endedBy = endedBy;
    else delete call.endedBy;
    return call;
  }

  /**
   * The call a reject is for: it must ring still. CALL_NOT_FOUND for a call the session never heard of (or forgot),
   * CALL_ENDED for one that is over. Marks it as being rejected until `rejected` or `rejectFailed`.
   */
  startReject(callId: string, now = Date.now()): TrackedCall {
    const call = this.calls.get(callId);
    if (!call) throw new GatewayError('CALL_NOT_FOUND', `no recent call ${callId} reached this session`);
    if (call.status !== 'ringing' || call.rejecting || now - Date.parse(call.offeredAt) > RING_LIMIT_MS) {
      const how = call.status === 'ringing' ? (call.rejecting ? 'is being rejected already' : 'is over') : `was ${call.status}${call.endedBy ? ` (by ${call.endedBy})` : ''}`;
      throw new GatewayError('CALL_ENDED', `call ${callId} ${how}`);
    }
    call.rejecting = true;
    return call;
  }

  /** The reject reached the network: the call is over, rejected by `by`. */
  rejected(callId: string, by: CallRejecter): TrackedCall | undefined {
    return this.end(callId, 'rejected', by);
  }

  /** The reject could not be sent: the call rings on (unless the network ended it meanwhile). */
  rejectFailed(callId: string): void {
    const call = this.calls.get(callId);
    if (call) call.rejecting = false;
  }
}

/** The payload of the call.* event of `call` in its current status; `at` is when this happened (ISO 8601). */
export function callPayload(call: TrackedCall, at: string): Record<string, unknown> {
  return {
    callId: call.callId,
    from: call.from,
    chatId: call.chatId,
    isVideo: call.isVideo,
    isGroup: call.isGroup,
    status: call.status,
    ...(call.endedBy ? { endedBy: call.endedBy } : {}),
    offeredAt: call.offeredAt,
    ...(call.offline ? { offline: true } : {}),
    timestamp: at,
  };
}
