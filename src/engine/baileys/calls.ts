// Calls on Baileys: its `call` events → call.* (BAILEYS.md §11.1), and rejecting a call that rings (`sock.rejectCall`).
import { isJidGroup, type BaileysEventMap } from '@whiskeysockets/baileys';
import { CALL_EVENT, CallBook, callPayload, type TrackedCall } from '../calls.js';
import type { CallRejecter } from '../types.js';
import { toGatewayError, withTimeout, type SessionContext } from './context.js';

type WACall = BaileysEventMap['call'][number];

/** how long a reject waits for the server's ack (Baileys' query resolves undefined at its own timeout) */
const REJECT_TIMEOUT_MS = 15_000;

export class BaileysCalls {
  readonly book = new CallBook();

  constructor(private readonly ctx: SessionContext) {}

  /**
   * One Baileys call update. `offer` rings; `accept` and `reject` come from another device of the account; `timeout`
   * is a call nobody answered; `terminate` ends a call: after an accept or a reject it only hangs up, but a call that
   * still rang was cancelled by its caller (missed). Ringing, preaccept, transport and relaylatency report nothing.
   */
  handle(call: WACall, canonicalChat: (jid: string) => string): void {
    this.ctx.ids.remember(call.from, call.callerPn, 'call');
    const at = (call.date instanceof Date && !Number.isNaN(call.date.getTime()) ? call.date : new Date()).toISOString();
    let tracked: TrackedCall | undefined;
    switch (call.status) {
      case 'offer':
        tracked = this.book.offer({
          callId: call.id,
          caller: call.from,
          from: this.ctx.ids.ref(call.from, call.callerPn, 'call'),
          chatId: call.groupJid && isJidGroup(call.groupJid) ? call.groupJid : canonicalChat(call.chatId),
          isVideo: !!call.isVideo,
          isGroup: !!call.isGroup,
          offeredAt: at,
          ...(call.offline ? { offline: true } : {}),
        });
        break;
      case 'accept':
        tracked = this.book.end(call.id, 'accepted');
        break;
      case 'reject':
        tracked = this.book.end(call.id, 'rejected', 'device');
        break;
      case 'timeout':
        tracked = this.book.end(call.id, 'missed', 'timeout');
        break;
      case 'terminate':
        tracked = this.book.end(call.id, 'missed', 'caller');
        break;
      default:
        return;
    }
    if (tracked) this.ctx.hooks.event(CALL_EVENT[tracked.status], callPayload(tracked, at));
  }

  /** Rejects a call that rings: the reject stanza to its caller (Baileys' rejectCall), then call.rejected. */
  async reject(callId: string, by: CallRejecter): Promise<void> {
    const call = this.book.startReject(callId);
    try {
      const sock = await this.ctx.ready();
      await withTimeout(sock.rejectCall(callId, call.caller), 'reject the call', REJECT_TIMEOUT_MS);
    } catch (err) {
      this.book.rejectFailed(callId);
      throw toGatewayError(err, 'reject the call');
    }
    const rejected = this.book.rejected(callId, by);
    if (rejected) this.ctx.hooks.event('call.rejected', callPayload(rejected, new Date().toISOString()));
  }
}
