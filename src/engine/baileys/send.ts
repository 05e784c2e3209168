// Messaging on Baileys: content mapping for every message type (bytes or the gateway's own downloaded file, never a user's URL), quotes, mentions, forwards, edits, deletes, reactions, typing, seen, star.
import { generateMessageIDV2, isJidGroup, isJidStatusBroadcast, isLidUser, isPnUser, type AnyMessageContent, type MiscMessageGenerationOptions, type proto, type WAMessage, type WAMessageKey, type WAUrlInfo, type WASocket } from '@whiskeysockets/baileys';
import { GatewayError } from '../../errors.js';
import { imageThumbnail, type ImageThumbnail } from '../../media/thumbnail.js';
import { jidKind, phoneOfJid } from '../jid.js';
import type { CastVote, HistoryAnchor, LinkPreview, MessageRef, MessagingOps, OutgoingContent, OutgoingMedia, SendOptions, SentMessage, TypingState } from '../types.js';
import { fromRaw, isoOf, messageSecretOf, toRaw } from './content.js';
import { toGatewayError, withTimeout, type SessionContext } from './context.js';
import { bare } from './identities.js';
import { pollVoteMessage } from './polls.js';

const SEND_TIMEOUT_MS = 60_000;

/**
 * Baileys fetches a preview of the first https:// URL of any text it generates (sends and edits) whose `linkPreview`
 * is undefined, through link-preview-js when it is installed: an unguarded fetcher (internal addresses, no URL
 * policy). The gateway builds previews itself (src/messages/link-preview.ts); texts carry that preview or
 * `linkPreview: null`, and every send overrides Baileys' `getUrlInfo` (its options spread last) with one that fetches nothing.
 */
export const NO_URL_FETCH = { getUrlInfo: async (_text: string): Promise<undefined> => undefined };

export type MessengerOps = Omit<MessagingOps, 'downloadMedia'>;

export class BaileysMessenger implements MessengerOps {
  constructor(private readonly ctx: SessionContext) {}

  async sendMessage(chatId: string, content: OutgoingContent, options: SendOptions): Promise<SentMessage> {
    const status = isJidStatusBroadcast(chatId);
    if (status && !options.statusViewers?.length) throw new GatewayError('VALIDATION_FAILED', 'a status post needs its viewers', [{ path: '/statusViewers', message: 'is required' }]);
    const sock = await this.ctx.ready();
    const message = buildContent(content, options, content.type === 'image' ? await this.thumbnailOf(content.media) : undefined);
    // the id is chosen here and remembered before sending, so the echo Baileys emits can never beat it
    // a queued send carries the id chosen when it was queued: a re-send after a crash goes out under the same id
    const messageId = options.messageId ?? generateMessageIDV2(sock.user?.id);
    this.ctx.ownSends.set(messageId, chatId);
    this.ctx.serverAcks.expect(messageId, chatId);
    // its receipts wait until the caller has recorded it: a turn of the event loop after this returns (events.ts)
    let recorded!: () => void;
    this.ctx.sendsInFlight.set(messageId, new Promise<void>((resolve) => (recorded = resolve)));
    try {
      return await this.sendWithId(chatId, content, options, sock, message, status, messageId);
    } catch (err) {
      // it did not leave (or its send failed before it could): no answer is expected of it
      this.ctx.serverAcks.forget(messageId);
      throw err;
    } finally {
      setImmediate(() => {
        this.ctx.sendsInFlight.delete(messageId);
        recorded();
      });
    }
  }

  private async sendWithId(chatId: string, content: OutgoingContent, options: SendOptions, sock: WASocket, message: AnyMessageContent, status: boolean, messageId: string): Promise<SentMessage> {
    const misc: MiscMessageGenerationOptions = {
      ...NO_URL_FETCH,
      messageId,
      ...(options.quoted ? { quoted: quotedMessage(options.quoted) } : {}),
      // a status goes to exactly these people (Baileys fans the sender key out to their devices)
      ...(status ? { statusJidList: options.statusViewers } : {}),
    };
    let sent: WAMessage | undefined;
    try {
      sent = await withTimeout(sock.sendMessage(chatId, message, misc), 'send', SEND_TIMEOUT_MS);
    } catch (err) {
      this.ctx.ownSends.del(messageId);
      // a file Baileys could not read (the staged download) is the daemon's failure: its path stays in the log
      if ((err as NodeJS.ErrnoException).syscall !== undefined) throw new GatewayError('INTERNAL', 'send: the media file could not be read', undefined, { cause: err });
      // sending to a group reads its metadata first: the group errors of that query mean what they say
      throw toGatewayError(err, 'send', isJidGroup(chatId) ? {
        404: () => new GatewayError('GROUP_NOT_FOUND', `group ${chatId} not found`),
        403: () => new GatewayError('NOT_GROUP_MEMBER', `this session is not a member of ${chatId}`),
      } : {});
    }
    if (!sent?.key.id) throw new GatewayError('NETWORK_ERROR', 'send: the network did not accept the message');
    const result: SentMessage = {
      messageId: sent.key.id,
      timestamp: isoOf(sent.messageTimestamp),
      status: 'pending',
      chatId,
      raw: toRaw(sent),
    };
    const secret = content.type === 'poll' ? messageSecretOf(sent.message) : undefined;
    if (secret) result.secret = secret;
    if (jidKind(chatId) === 'user' || jidKind(chatId) === 'lid') {
      const pn = this.ctx.ids.pnOf(chatId) ?? (isLidUser(chatId) ? await this.pnFor(chatId) : undefined);
      const lid = this.ctx.ids.lidOf(chatId) ?? (pn ? await this.lidFor(pn) : undefined);
      if (pn) result.phoneNumber = phoneOfJid(pn)!;
      if (lid) result.lid = lid;
      // one chat per person, whichever form the send named: the phone JID when the number is known (docs/API.md);
      // its receipts name the same chat (events.ts ack)
      if (pn) {
        result.chatId = pn;
        this.ctx.ownSends.set(messageId, pn);
      }
    }
    this.ctx.serverAcks.rename(messageId, result.chatId);
    return { ...result, ...(await this.ctx.serverAcks.outcome(messageId)) };
  }

  async editMessage(target: MessageRef, text: string): Promise<void> {
    const key = keyOf(target);
    if (!key.fromMe) throw new GatewayError('NOT_MESSAGE_OWNER', 'only messages this session sent can be edited');
    await this.protocol(key.remoteJid!, { text, edit: key, linkPreview: null } as AnyMessageContent, 'edit');
  }

  async deleteMessage(target: MessageRef): Promise<void> {
    const key = keyOf(target);
    await this.protocol(key.remoteJid!, { delete: key }, 'delete');
  }

  async react(target: MessageRef, emoji: string): Promise<void> {
    const key = keyOf(target);
    await this.protocol(key.remoteJid!, { react: { text: emoji, key } }, 'react');
  }

  async sendTyping(chatId: string, state: TypingState): Promise<void> {
    const sock = await this.ctx.ready();
    await withTimeout(sock.sendPresenceUpdate(state, chatId), 'typing').catch((err: unknown) => {
      throw toGatewayError(err, 'typing');
    });
  }

  async markSeen(target: MessageRef): Promise<void> {
    if (target.fromMe) return;
    const sock = await this.ctx.ready();
    const key = keyOf(target);
    await withTimeout(sock.readMessages([key]), 'seen').catch((err: unknown) => {
      throw toGatewayError(err, 'seen');
    });
  }

  /**
   * A vote on a poll: WhatsApp's encrypted pollUpdateMessage, which Baileys has no builder for (polls.ts encrypts it
   * with the poll's secret, as the decryption of received votes expects it).
   */
  async votePoll(poll: MessageRef, selectedOptions: string[]): Promise<CastVote> {
    const sock = await this.ctx.ready();
    const raw = fromRaw(poll.raw);
    const secret = raw?.message?.messageContextInfo?.messageSecret;
    if (!raw?.message || !secret?.length) throw new GatewayError('NOT_SUPPORTED', `poll ${poll.id} was stored without its secret (before raw copies were kept): it cannot be voted on`);
    const key = keyOf(poll);
    const me = this.ctx.me();
    // the ids that went into the key: the poll's creator as its key names it, and this account in the same addressing
    const creator = key.fromMe ? (isLidUser(key.remoteJid ?? undefined) ? me.lid : me.pn) : bare(key.participant || key.remoteJid);
    const voter = isLidUser(creator ?? undefined) ? me.lid : me.pn;
    if (!creator || !voter) throw new GatewayError('SESSION_NOT_CONNECTED', 'the account ids are not known yet');
    const messageId = generateMessageIDV2(sock.user?.id);
    const timestampMs = Date.now();
    const message = pollVoteMessage({ key, secret: Buffer.from(secret), creator, voter, selectedOptions, timestampMs });
    this.ctx.ownSends.set(messageId, key.remoteJid!);
    try {
      await withTimeout(sock.relayMessage(key.remoteJid!, message, { messageId }), 'vote', SEND_TIMEOUT_MS);
    } catch (err) {
      this.ctx.ownSends.del(messageId);
      throw toGatewayError(err, 'vote');
    }
    return { messageId, timestamp: new Date(timestampMs).toISOString() };
  }

  /**
   * A history request to the phone (a peer data operation, HISTORY_SYNC_ON_DEMAND, to the account's own devices): its
   * message id is the request id the phone's ON_DEMAND history notification names (peerDataRequestSessionId).
   */
  async requestHistory(anchor: HistoryAnchor, count: number): Promise<{ requestId: string }> {
    const sock = await this.ctx.ready();
    const key = keyOf(anchor);
    const requestId = await withTimeout(sock.fetchMessageHistory(count, key, anchor.timestamp), 'history request', SEND_TIMEOUT_MS).catch((err: unknown) => {
      throw toGatewayError(err, 'history request');
    });
    this.ctx.historyRequests.set(requestId, anchor.chatId);
    this.ctx.historyRequests.set(`chat:${anchor.chatId}`, requestId);
    return { requestId };
  }

  /** One app-state patch per message: Baileys' star() only applies the first message it is given. */
  async star(target: MessageRef, star: boolean): Promise<void> {
    const sock = await this.ctx.ready();
    const key = keyOf(target);
    await withTimeout(sock.star(key.remoteJid!, [{ id: key.id!, fromMe: !!key.fromMe }], star), 'star').catch((err: unknown) => {
      throw toGatewayError(err, 'star');
    });
  }

  // ---- internals ----

  /** Sends an edit, revoke or reaction and remembers its id, so its echo is not reported as news. */
  private async protocol(chatId: string, content: AnyMessageContent, what: string): Promise<void> {
    const sock = await this.ctx.ready();
    const messageId = generateMessageIDV2(sock.user?.id);
    this.ctx.ownSends.set(messageId, chatId);
    const edited = (content as { edit?: WAMessageKey }).edit?.id;
    if (edited) this.ctx.ownSends.set(`edit:${edited}`, chatId);
    try {
      await withTimeout(sock.sendMessage(chatId, content, { ...NO_URL_FETCH, messageId } as MiscMessageGenerationOptions), what, SEND_TIMEOUT_MS);
    } catch (err) {
      throw toGatewayError(err, what);
    }
  }

  /** The gateway's thumbnail of an image to send; null when it cannot be made (the message goes without one). */
  private async thumbnailOf(media: OutgoingMedia): Promise<ImageThumbnail | null> {
    try {
      return await imageThumbnail(media.file ? { path: media.file.path, size: media.size } : { data: media.data });
    } catch (err) {
      this.ctx.logger.info({ err: (err as Error).message }, 'sending an image without a thumbnail');
      return null;
    }
  }

  /** The phone JID of a LID from Baileys' own mapping store (no network query; absent when it has none). */
  private async pnFor(lid: string): Promise<string | undefined> {
    const sock = this.ctx.current();
    if (!sock) return undefined;
    const pn = bare(await withTimeout(sock.signalRepository.lidMapping.getPNForLID(lid), 'pn lookup', 3000).catch(() => null));
    if (!pn || !isPnUser(pn)) return undefined;
    this.ctx.ids.remember(pn, lid, 'network');
    return this.ctx.ids.pnOf(lid);
  }

  /** The LID of a phone JID: the local mapping, else one USync query (bounded; absent on failure). */
  private async lidFor(pn: string): Promise<string | undefined> {
    const sock = this.ctx.current();
    if (!sock || !isPnUser(pn)) return undefined;
    const lid = await withTimeout(sock.signalRepository.lidMapping.getLIDForPN(pn), 'lid lookup', 3000).catch(() => null);
    if (!lid || !isLidUser(lid)) return undefined;
    this.ctx.ids.remember(pn, lid, 'lookup');
    return this.ctx.ids.lidOf(pn);
  }
}

/**
 * The Baileys content of an outgoing message; media as Buffers or the staged download's path (the service fetched and
 * checked them). An image carries the gateway's thumbnail and dimensions; without one (null), an empty thumbnail, so
 * that Baileys does not decode the image itself (with sharp, outside the gateway's image limits and workers).
 */
export function buildContent(content: OutgoingContent, options: SendOptions, thumbnail?: ImageThumbnail | null): AnyMessageContent {
  const extras: { mentions?: string[]; contextInfo?: proto.IContextInfo } = {
    ...(options.mentions?.length ? { mentions: options.mentions } : {}),
    ...(options.forwarded ? { contextInfo: { isForwarded: true, forwardingScore: 1 } } : {}),
  };
  let message: Record<string, unknown>;
  switch (content.type) {
    case 'text':
      // never a preview Baileys fetches itself (see NO_URL_FETCH): the gateway's own, or none
      message = { text: content.text, linkPreview: content.preview ? urlInfoOf(content.preview) : null };
      break;
    case 'image':
      message = {
        image: mediaOf(content.media),
        mimetype: content.media.mimeType,
        ...(content.caption ? { caption: content.caption } : {}),
        ...(thumbnail ? { jpegThumbnail: thumbnail.jpeg.toString('base64'), width: thumbnail.width, height: thumbnail.height } : { jpegThumbnail: '' }),
      };
      break;
    case 'video':
      message = { video: mediaOf(content.media), mimetype: content.media.mimeType, ...(content.caption ? { caption: content.caption } : {}) };
      break;
    case 'voice':
      message = { audio: mediaOf(content.media), mimetype: content.media.mimeType, ptt: content.ptt ?? false };
      break;
    case 'file':
      message = {
        document: mediaOf(content.media),
        mimetype: content.media.mimeType,
        fileName: content.media.filename ?? 'file',
        ...(content.caption ? { caption: content.caption } : {}),
      };
      break;
    case 'sticker':
      message = { sticker: mediaOf(content.media), mimetype: content.media.mimeType };
      break;
    case 'poll':
      // selectableCount 0 = any number of options (pollCreationMessage); 1 = single choice (pollCreationMessageV3)
      message = { poll: { name: content.title, values: content.options, selectableCount: content.multiSelect ? 0 : 1 } };
      break;
    case 'location':
      message = {
        location: {
          degreesLatitude: content.latitude,
          degreesLongitude: content.longitude,
          ...(content.name ? { name: content.name } : {}),
          ...(content.address ? { address: content.address } : {}),
        },
      };
      break;
    case 'contact':
      message = { contacts: { displayName: content.displayName, contacts: [{ displayName: content.displayName, vcard: content.vcard }] } };
      break;
  }
  // Baileys applies mentions and contextInfo to whatever content it built, media included
  return { ...message, ...extras } as AnyMessageContent;
}

/** Bytes in hand, or the downloaded file, which Baileys streams from disk (a local path: it never fetches it). */
function mediaOf(media: OutgoingMedia): Buffer | { url: string } {
  return media.file ? { url: media.file.path } : media.data;
}

/** The gateway's preview as Baileys' WAUrlInfo (it copies these fields into the extendedTextMessage). */
function urlInfoOf(preview: LinkPreview): WAUrlInfo {
  return {
    'canonical-url': preview.url,
    'matched-text': preview.url,
    title: preview.title,
    ...(preview.description ? { description: preview.description } : {}),
    ...(preview.thumbnail ? { jpegThumbnail: preview.thumbnail } : {}),
  };
}

/** The key of a stored message, as the network knows it (the raw WAMessage when the gateway has it). */
export function keyOf(ref: MessageRef): WAMessageKey {
  const raw = fromRaw(ref.raw);
  if (raw?.key?.id === ref.id && raw.key.remoteJid) {
    return { remoteJid: raw.key.remoteJid, id: raw.key.id, fromMe: !!raw.key.fromMe, ...(raw.key.participant ? { participant: raw.key.participant } : {}) };
  }
  return {
    remoteJid: ref.chatId,
    id: ref.id,
    fromMe: ref.fromMe,
    ...(!ref.fromMe && ref.participant && isJidGroup(ref.chatId) ? { participant: ref.participant } : {}),
  };
}

/**
 * The message a reply quotes. With the stored WAMessage (kept for sent and received messages) the quote carries its
 * full content; without it (e.g. a row stored before raw copies were kept) the quote is rebuilt from the stored type
 * and text, which is what the app shows.
 */
export function quotedMessage(ref: MessageRef): WAMessage {
  const raw = fromRaw(ref.raw);
  if (raw?.message && raw.key?.id === ref.id) return raw;
  const key = keyOf(ref);
  const text = ref.text ?? '';
  let message: proto.IMessage;
  switch (ref.type) {
    case 'image':
      message = { imageMessage: { caption: text } };
      break;
    case 'video':
      message = { videoMessage: { caption: text } };
      break;
    case 'voice':
      message = { audioMessage: {} };
      break;
    case 'file':
      message = { documentMessage: { caption: text } };
      break;
    case 'sticker':
      message = { stickerMessage: {} };
      break;
    case 'location':
      message = { locationMessage: {} };
      break;
    default:
      message = { conversation: text };
  }
  return { key, message, ...(key.participant ? { participant: key.participant } : {}) } as WAMessage;
}
