// Calls above the engines: the reject route's work, and each session's call policy (`config.calls`): a call that rings
// on a session with `reject: true` is rejected at once and, with `replyText`, its caller gets that text.
import { GatewayError } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import type { GatewayEvent } from '../events/catalogue.js';
import type { JidRef } from '../engine/jid.js';
import type { CallRejecter } from '../engine/types.js';
import type { Logger } from '../logger.js';
import type { MessagingService } from '../messages/service.js';
import type { SessionManager } from '../sessions/manager.js';

/** `config.calls` of a session (src/http/schemas/sessions.ts). */
export interface CallPolicy {
  reject: boolean;
  replyText?: string;
}

/** The session's call policy, if its config has a valid one. */
export function callPolicyOf(config: Record<string, unknown> | undefined): CallPolicy | undefined {
  const calls = config?.calls as Partial<CallPolicy> | undefined;
  if (!calls || typeof calls !== 'object' || calls.reject !== true) return undefined;
  return { reject: true, ...(typeof calls.replyText === 'string' && calls.replyText.length > 0 ? { replyText: calls.replyText } : {}) };
}

export class CallsService {
  constructor(private readonly deps: { sessions: SessionManager; messaging: Pick<MessagingService, 'send'>; logger: Logger }) {}

  /** Rejects a call that rings on a connected session (CALL_NOT_FOUND, CALL_ENDED, SESSION_NOT_CONNECTED otherwise). */
  async reject(session: string, callId: string, by: CallRejecter = 'gateway'): Promise<void> {
    const engine = await this.deps.sessions.connected(session);
    await engine.rejectCall(callId, by);
  }

  /**
   * Applies each session's call policy to the calls that ring on it. It acts on live events only (a replayed or resumed
   * stream never rejects anything), of sessions running on this daemon (a cluster relays the others' events too), and
   * reads the policy from the session's stored config each time, so a PATCH of it counts from the next call.
   */
  attach(bus: EventBus): () => void {
    return bus.subscribe((event) => {
      if (event.event !== 'call.received') return;
      this.apply(event).catch((err: unknown) => this.deps.logger.warn({ err, session: event.session }, 'the call policy failed'));
    });
  }

  private async apply(event: GatewayEvent): Promise<void> {
    const { session } = event;
    if (!this.deps.sessions.isRunning(session)) return;
    const policy = callPolicyOf((await this.deps.sessions.find(session))?.config);
    if (!policy) return;
    const payload = event.payload as { callId: string; from: JidRef };
    try {
      await this.reject(session, payload.callId, 'auto');
    } catch (err) {
      // it ended (or was rejected) meanwhile, or the session went down: nothing to answer
      if (err instanceof GatewayError && ['CALL_ENDED', 'CALL_NOT_FOUND', 'SESSION_NOT_CONNECTED'].includes(err.code)) return;
      throw err;
    }
    if (!policy.replyText) return;
    // to the caller, by phone number when known (the chat the session's other messages with them are in)
    await this.deps.messaging.send({ session, chatId: payload.from.jid, type: 'text', text: policy.replyText, linkPreview: false });
  }
}
