// Channels, presence, contacts, blocklist and labels on Baileys (groups live in groups.ts).
import { isJidGroup, isLidUser, isPnUser, QueryIds, XWAPaths, type ChatModification, type WASocket } from '@whiskeysockets/baileys';
import { executeWMexQuery } from '@whiskeysockets/baileys/lib/Socket/mex.js';
import { GatewayError, NetworkError } from '../../errors.js';
import { phoneOfJid, userJid } from '../jid.js';
import type { ChannelInfo, ChatOps, ChatStateChange, ContactInfo, ImageInput, LabelInfo, LastMessage, NumberCheck } from '../types.js';
import { fromRaw } from './content.js';
import { errorCode, toGatewayError, withTimeout, type SessionContext } from './context.js';
import { bare } from './identities.js';
import { squarePicture, updatePicture } from './pictures.js';

export type ChatOpName = Exclude<keyof ChatOps, import('./groups.js').GroupOpName>;

/** What the engine learnt of a contact from events (names); the network has no contact list to fetch. */
export interface KnownContact {
  name?: string;
  savedName?: string;
  businessName?: string;
}

export class BaileysChats implements Pick<ChatOps, ChatOpName> {
  /** names seen in contact events, by canonical jid */
  readonly known = new Map<string, KnownContact>();

  constructor(private readonly ctx: SessionContext) {}

  // ---- channels (newsletters) ----

  /** newsletterCreate parses the answer without null checks and can throw after the channel exists; the query is sent here and read defensively. */
  async createChannel(input: { name: string; description?: string; picture?: ImageInput }): Promise<ChannelInfo> {
    const raw = await this.channelCall(
      (s) => executeWMexQuery({ input: { name: input.name, description: input.description ?? null } }, QueryIds.CREATE, XWAPaths.xwa2_newsletter_create, s.query, s.generateMessageTag),
      'create channel',
    );
    const channel = channelOf(raw, 'owner');
    if (!channel) throw new NetworkError('create channel: the network answered without a channel id');
    if (input.picture) {
      const picture = input.picture;
      await squarePicture(picture)
        .then((square) => this.channelCall((s) => s.newsletterUpdatePicture(channel.id, square), 'set channel picture'))
        .catch((err: unknown) => {
          this.ctx.logger.warn({ err, channel: channel.id }, 'the channel was created but its picture could not be set');
        });
    }
    this.ctx.hooks.event('newsletter.update', { id: channel.id, action: 'created', name: channel.name });
    return channel;
  }

  async getChannel(channelId: string): Promise<ChannelInfo> {
    const raw = await this.channelCall((s) => s.newsletterMetadata('jid', channelId), 'channel metadata');
    const channel = channelOf(raw, undefined);
    if (!channel) throw new GatewayError('CHANNEL_NOT_FOUND', `channel ${channelId} not found`);
    return channel;
  }

  async deleteChannel(channelId: string): Promise<void> {
    const channel = await this.getChannel(channelId);
    if (channel.role !== 'owner') throw new GatewayError('NOT_CHANNEL_OWNER', `only the owner of ${channelId} can delete it`);
    await this.channelCall((s) => s.newsletterDelete(channelId), 'delete channel');
    this.ctx.hooks.event('newsletter.update', { id: channelId, action: 'deleted' });
  }

  async followChannel(channelId: string): Promise<void> {
    await this.channelCall((s) => s.newsletterFollow(channelId), 'follow channel');
    this.ctx.hooks.event('newsletter.update', { id: channelId, action: 'followed' });
  }

  async unfollowChannel(channelId: string): Promise<void> {
    await this.channelCall((s) => s.newsletterUnfollow(channelId), 'unfollow channel');
    this.ctx.hooks.event('newsletter.update', { id: channelId, action: 'unfollowed' });
  }

  async muteChannel(channelId: string): Promise<void> {
    await this.channelCall((s) => s.newsletterMute(channelId), 'mute channel');
    this.ctx.hooks.event('newsletter.update', { id: channelId, action: 'muted' });
  }

  async unmuteChannel(channelId: string): Promise<void> {
    await this.channelCall((s) => s.newsletterUnmute(channelId), 'unmute channel');
    this.ctx.hooks.event('newsletter.update', { id: channelId, action: 'unmuted' });
  }

  // ---- presence ----

  /** Baileys skips this silently while the account has no push name yet (just after the first pairing). */
  async setPresence(presence: 'available' | 'unavailable'): Promise<void> {
    await this.call((s) => s.sendPresenceUpdate(presence), 'set presence');
  }

  async subscribePresence(jid: string): Promise<void> {
    await this.call((s) => s.presenceSubscribe(jid), 'subscribe presence');
  }

  // ---- contacts ----

  async getContact(jid: string): Promise<ContactInfo | undefined> {
    const pn = this.ctx.ids.pnOf(jid);
    if (pn) {
      const [check] = await this.checkNumbers([pn.split('@')[0]!]);
      if (!check?.registered) return undefined;
    } else if (!isLidUser(jid)) {
      return undefined;
    }
    const id = pn ?? bare(jid)!;
    const lid = this.ctx.ids.lidOf(id);
    const known = this.known.get(id) ?? {};
    return { jid: id, ...(pn ? { phoneNumber: phoneOfJid(pn)! } : {}), ...(lid ? { lid } : {}), ...known };
  }

  /** profilePictureUrl throws (401/404) when there is none or it is hidden: both read as "no picture". */
  async getProfilePicture(jid: string): Promise<string | undefined> {
    const sock = await this.ctx.ready();
    try {
      return (await withTimeout(sock.profilePictureUrl(jid, 'image'), 'profile picture')) ?? undefined;
    } catch (err) {
      const code = errorCode(err);
      if (code === 401 || code === 403 || code === 404) return undefined;
      throw toGatewayError(err, 'profile picture');
    }
  }

  async setProfilePicture(image: ImageInput | null): Promise<void> {
    const me = this.ctx.me().pn;
    if (!me) throw new GatewayError('SESSION_NOT_CONNECTED', 'the session has no account yet');
    if (!image) return void (await this.call((s) => s.removeProfilePicture(me), 'remove profile picture'));
    await this.call((s) => updatePicture(s, me, image), 'set profile picture');
  }

  /** onWhatsApp leaves unknown numbers out and returns no LIDs; the LIDs come from one USync LID query. */
  async checkNumbers(phoneDigits: string[]): Promise<NumberCheck[]> {
    const found = (await this.call((s) => s.onWhatsApp(...phoneDigits.map((d) => `+${d}`)), 'check numbers')) ?? [];
    const registered = new Set(found.filter((f) => f.exists).map((f) => String(f.jid).split('@')[0]!.split(':')[0]));
    const pns = phoneDigits.filter((d) => registered.has(d)).map(userJid);
    const sock = this.ctx.current();
    if (sock && pns.length) {
      const mappings = await withTimeout(sock.signalRepository.lidMapping.getLIDsForPNs(pns), 'lid lookup', 5_000).catch(() => null);
      for (const m of mappings ?? []) this.ctx.ids.remember(m.pn, m.lid, 'lookup');
    }
    return phoneDigits.map((digits) => {
      if (!registered.has(digits)) return { phoneNumber: `+${digits}`, registered: false };
      const lid = this.ctx.ids.lidOf(userJid(digits));
      return { phoneNumber: `+${digits}`, registered: true, ...(lid ? { lid } : {}) };
    });
  }

  /** updateBlockStatus needs the PN↔LID pair; the change is reported here (the server tells only other devices). */
  async setBlocked(jid: string, blocked: boolean): Promise<void> {
    if (!isPnUser(jid) && !isLidUser(jid)) throw new GatewayError('CONTACT_NOT_FOUND', `${jid} is not a person on the network`);
    await this.call((s) => s.updateBlockStatus(jid, blocked ? 'block' : 'unblock'), blocked ? 'block' : 'unblock');
    this.ctx.hooks.event('blocklist.update', { action: blocked ? 'blocked' : 'unblocked', jids: [this.ctx.ids.canonical(jid) ?? jid] });
  }

  // ---- labels (business accounts; the change comes back as labels.edit / labels.association) ----

  async saveLabel(label: LabelInfo): Promise<void> {
    this.requireBusiness();
    await this.call((s) => s.addLabel('', { id: label.id, name: label.name, color: label.color, deleted: false }), 'save label');
  }

  async deleteLabel(labelId: string): Promise<void> {
    this.requireBusiness();
    await this.call((s) => s.addLabel('', { id: labelId, deleted: true }), 'delete label');
  }

  async setChatLabel(chatId: string, labelId: string, assigned: boolean): Promise<void> {
    this.requireBusiness();
    await this.call((s) => (assigned ? s.addChatLabel(chatId, labelId) : s.removeChatLabel(chatId, labelId)), assigned ? 'label chat' : 'unlabel chat');
  }

  // ---- chat state (app-state patches; with emitOwnEvents Baileys applies its own patch and emits chats.update) ----

  async changeChat(chatId: string, change: ChatStateChange, last?: LastMessage): Promise<void> {
    await this.call((s) => s.chatModify(chatModification(chatId, change, last), chatId), `${change.action} chat`);
  }

  // ---- internals ----

  private requireBusiness(): void {
    if (!this.ctx.isBusiness()) throw new GatewayError('NOT_BUSINESS_ACCOUNT', 'labels are only available to WhatsApp Business accounts');
  }

  private async call<T>(work: (sock: WASocket) => Promise<T>, what: string): Promise<T> {
    const sock = await this.ctx.ready();
    try {
      return await withTimeout(work(sock), what);
    } catch (err) {
      throw toGatewayError(err, what);
    }
  }

  /** Channel queries (w:mex GraphQL): anything that is not a clear "not found" is a network failure. */
  private async channelCall<T>(work: (sock: WASocket) => Promise<T>, what: string): Promise<T> {
    const sock = await this.ctx.ready();
    try {
      return await withTimeout(work(sock), what);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const code = errorCode(err);
      if (code === 404) throw new GatewayError('CHANNEL_NOT_FOUND', `${what}: channel not found`);
      if (code === 403 || code === 401) throw new GatewayError('NOT_CHANNEL_OWNER', `${what}: not allowed for this session`);
      throw new NetworkError(`${what}: ${(err as Error).message}`, err);
    }
  }
}

/** A channel from the raw GraphQL object newsletterMetadata/create return (read defensively: fields may be missing). */
export function channelOf(raw: unknown, role: ChannelInfo['role'] | undefined): ChannelInfo | undefined {
  const r = raw as Record<string, any> | null | undefined;
  if (!r || typeof r.id !== 'string') return undefined;
  const thread = (r.thread_metadata ?? {}) as Record<string, any>;
  const viewer = (r.viewer_metadata ?? {}) as Record<string, any>;
  const viewerRole = String(viewer.role ?? '').toLowerCase();
  const picture = thread.picture?.direct_path ?? thread.preview?.direct_path;
  return {
    id: r.id,
    name: String(thread.name?.text ?? r.name ?? ''),
    description: String(thread.description?.text ?? r.description ?? ''),
    ...(typeof picture === 'string' ? { pictureUrl: `https://mmg.whatsapp.net${picture}` } : {}),
    followers: Number.parseInt(String(thread.subscribers_count ?? r.subscribers ?? 0), 10) || 0,
    role: role ?? (viewerRole === 'owner' ? 'owner' : viewerRole === 'subscriber' || viewerRole === 'admin' ? 'follower' : 'guest'),
    muted: String(viewer.mute ?? r.mute_state ?? '').toUpperCase() === 'ON',
  };
}

/** The chatModify argument of a chat action; archive and read carry the chat's newest message (WhatsApp's message range). */
export function chatModification(chatId: string, change: ChatStateChange, last: LastMessage | undefined): ChatModification {
  const minimal = last && minimalMessage(chatId, last);
  const lastMessages = minimal ? [minimal] : [];
  switch (change.action) {
    case 'archive':
    case 'unarchive':
      return { archive: change.action === 'archive', lastMessages };
    case 'read':
    case 'unread':
      return { markRead: change.action === 'read', lastMessages };
    case 'pin':
    case 'unpin':
      return { pin: change.action === 'pin' };
    case 'mute':
      return { mute: change.until };
    case 'unmute':
      return { mute: null };
  }
}

/** The key and time of the stored message (its network copy's key when the store has it), as the message range wants them. */
function minimalMessage(chatId: string, last: LastMessage): { key: { remoteJid: string; id: string; fromMe: boolean; participant?: string }; messageTimestamp: number } | undefined {
  const raw = fromRaw(last.raw);
  const participant = raw?.key.participant ?? last.participant;
  // a group message of someone else names its author; without one the range is left out (Baileys refuses it)
  if (isJidGroup(chatId) && !last.fromMe && !participant) return undefined;
  const key = {
    remoteJid: raw?.key.remoteJid ?? chatId,
    id: last.id,
    fromMe: last.fromMe,
    ...(participant && isJidGroup(chatId) ? { participant } : {}),
  };
  return { key, messageTimestamp: Math.max(1, Math.floor(last.timestamp / 1000)) };
}
