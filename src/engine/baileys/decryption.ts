// Decryption health of a Baileys session: what Baileys (rc14) does about messages that do not decrypt, read from the
// lines it logs and the retry receipts it gets, turned into counters, message.undecryptable and message.failed.
import { proto, type BinaryNode, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import { isoTimestamp } from '../../timestamp.js';
import type { JidRef } from '../jid.js';
import { RETRY_EXHAUSTED, UndecryptableWatch, type DecryptionFailureKind } from '../decryption.js';
import { TtlCache } from './cache.js';
import type { SessionContext } from './context.js';
import { bare } from './identities.js';
import { failedPayload } from '../server-acks.js';

/** The Baileys log lines read here (lib/Utils/decode-wa-message.js, lib/Socket/messages-recv.js). */
const LINES = {
  /** error, `{key, err}`: one encrypted part of a message stanza did not decrypt */
  decryptFailed: 'failed to decrypt message',
  /** info, `{msgAttrs, retryCount}`: a retry receipt for an incoming message left */
  retrySent: 'sent retry receipt',
  /** debug, `{msgId}`: the retry limit (maxMsgRetryCount) of an incoming message is reached; Baileys asks no more */
  retryLimit: ['reached retry limit with new retry manager, clearing', 'reached retry limit, clearing'],
  /** info, `{attrs, key}`: a recipient asked again for a message already re-sent up to the limit */
  resendRefused: 'will not send message again, as sent too many times',
  /** debug, `{jid, id}`: a recipient asked again and the message is not re-sent (not found, or the limit reached) */
  resendUnavailable: 'recv retry request, but message not available',
} as const;

/** Baileys' text for a stanza without encrypted content (NO_MESSAGE_FOUND_ERROR_TEXT) */
const ABSENT = 'Message absent from node';

/** libsignal's and Baileys' error messages, by kind (the first match wins). */
const KINDS: Array<[DecryptionFailureKind, RegExp]> = [
  ['spent_key', /Key used already or never filled|old counter/i],
  ['invalid_prekey', /Invalid PreKey ID|Missing SignedPreKey|PreKeyError/i],
  ['bad_mac', /Bad MAC|No matching sessions found|InvalidMessageException/i],
  ['no_session', /No session record|No sessions|No open session|No SenderKeyRecord|No session found/i],
  ['absent', new RegExp(ABSENT)],
];

export function failureKind(error: string): DecryptionFailureKind {
  return KINDS.find(([, pattern]) => pattern.test(error))?.[0] ?? 'other';
}

export interface BaileysDecryptionOptions {
  giveUpMs: number;
  /** the chat and the author of a message key, as events name them */
  chatOf(key: WAMessageKey): string;
  authorOf(key: WAMessageKey): JidRef;
  /** whether the store holds the message already (a redelivery after a crash, not a failure) */
  isStored(id: string): Promise<boolean>;
}

export class BaileysDecryptionHealth {
  readonly watch: UndecryptableWatch;
  /** sent messages reported failed, so the lines of later retries do not report them again */
  private readonly failedSends = new TtlCache(60 * 60_000, 10_000);

  constructor(
    private readonly ctx: SessionContext,
    private readonly options: BaileysDecryptionOptions,
  ) {
    this.watch = new UndecryptableWatch(options.giveUpMs, {
      signal: (signal) => ctx.hooks.decryption?.(signal),
      undecryptable: (payload) => ctx.hooks.event('message.undecryptable', payload),
    });
  }

  /** Every line Baileys logs (debug and up). */
  noticeLog(msg: string | undefined, fields: unknown): void {
    if (!msg) return;
    const f = (fields ?? {}) as Record<string, any>;
    if (msg === LINES.decryptFailed) void this.failed(f.key as WAMessageKey | undefined, String(f.err?.message ?? f.err ?? ''));
    else if (msg === LINES.retrySent) {
      if (typeof f.msgAttrs?.id === 'string') this.watch.retried(f.msgAttrs.id);
    } else if ((LINES.retryLimit as readonly string[]).includes(msg)) {
      if (typeof f.msgId === 'string') this.watch.exhausted(f.msgId);
    } else if (msg === LINES.resendRefused) {
      const key = f.key as WAMessageKey | undefined;
      if (key?.fromMe && key.id) this.sendFailed(key.id, this.options.chatOf(key), `${f.attrs?.from ?? 'a recipient'} kept asking for it again past the retry limit`);
    } else if (msg === LINES.resendUnavailable) {
      if (typeof f.id === 'string' && typeof f.jid === 'string') this.sendFailed(f.id, this.options.chatOf({ remoteJid: f.jid, id: f.id }), 'a recipient asked for it again and it could not be re-sent (retry limit reached, or not found in the store)');
    }
  }

  /** A retry receipt reached the session: a recipient could not decrypt one of its messages. */
  receipt(node: BinaryNode): void {
    if (node.attrs?.type === 'retry') this.ctx.hooks.decryption?.({ kind: 'retry_receipt', direction: 'received' });
  }

  /** Upserted messages: one with content settles a failed message of its id (a retry recovered it). */
  upserted(messages: WAMessage[]): void {
    for (const msg of messages) {
      const id = msg.key.id;
      if (!id || msg.messageStubType === proto.WebMessageInfo.StubType.CIPHERTEXT || !msg.message) continue;
      if (this.watch.isWatched(id)) this.watch.recovered(id);
    }
  }

  close(): void {
    this.watch.close();
  }

  private async failed(key: WAMessageKey | undefined, error: string): Promise<void> {
    if (!key?.id || !key.remoteJid || this.fromOwnPhone(key)) return;
    try {
      if (await this.options.isStored(key.id)) return;
    } catch {
      // unknown: counted as a failure (the store's own failure is logged where it happened)
    }
    this.watch.failed({ messageId: key.id, chatId: this.options.chatOf(key), sender: key.fromMe ? this.own() : this.options.authorOf(key), kind: failureKind(error) });
  }

  /** A message of the account's own devices to the account (protocol messages: keys, history, app state): no user's. */
  private fromOwnPhone(key: WAMessageKey): boolean {
    if (!key.fromMe) return false;
    const me = this.ctx.me();
    const chat = bare(key.remoteJid);
    return chat !== undefined && (chat === me.pn || chat === me.lid);
  }

  private own(): JidRef {
    const me = this.ctx.me();
    return this.ctx.ids.ref(me.pn ?? me.lid, me.lid);
  }

  private sendFailed(messageId: string, chatId: string, detail: string): void {
    if (this.failedSends.get(messageId)) return;
    this.failedSends.set(messageId, true);
    this.ctx.hooks.decryption?.({ kind: 'exhausted', direction: 'outgoing' });
    this.ctx.hooks.event('message.failed', failedPayload(messageId, chatId, { reason: RETRY_EXHAUSTED, detail }));
  }
}
