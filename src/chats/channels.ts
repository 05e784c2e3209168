// Channel operations of SPEC §4 "Channels": create, list (owned or followed), get, delete (owner only), follow, mute.
import { GatewayError } from '../errors.js';
import type { ChannelInfo, EngineSession } from '../engine/types.js';
import type { Principal } from '../auth/scopes.js';
import { forCaller, type MediaSource } from '../messages/content.js';
import type { SessionManager } from '../sessions/manager.js';
import type { ChannelsRepo } from '../store/channels.js';
import { channelJid } from './ids.js';
import { loadPicture } from './picture.js';

export interface ChannelView {
  /** the channel JID, `…@newsletter`: what the paths call {channelId} */
  channelId: string;
  /** the same value under its first name (deprecated) */
  lid: string;
  name: string;
  description: string;
  profileUrl: string | null;
  followers: number;
  muted: boolean;
  /** the session sees the channel without following it */
  preview: boolean;
  role: 'owner' | 'follower' | 'guest';
}

export class ChannelsService {
  constructor(private readonly deps: { sessions: SessionManager; channels: ChannelsRepo; mediaSource: MediaSource }) {}

  /** `caller`: whose share of the download pool the picture URL takes */
  async create(session: string, input: { name: string; description?: string; profileUrl?: string }, caller?: Principal): Promise<ChannelView> {
    const engine = await this.engine(session);
    const picture = input.profileUrl !== undefined ? await loadPicture({ url: input.profileUrl }, forCaller(this.deps.mediaSource, caller), '/profileUrl') : undefined;
    const channel = await engine.createChannel({ name: input.name, ...(input.description !== undefined ? { description: input.description } : {}), ...(picture ? { picture } : {}) });
    await this.remember(session, channel);
    return channelView(channel);
  }

  /** The channels the session owns or follows, as the network shows them now. */
  async list(session: string, limit: number, offset: number): Promise<{ items: ChannelView[]; total: number }> {
    const engine = await this.engine(session);
    const items: ChannelView[] = [];
    for (const row of await this.deps.channels.list(session, limit, offset)) {
      try {
        const channel = await engine.getChannel(row.jid);
        await this.remember(session, channel);
        if (channel.role !== 'guest') items.push(channelView(channel));
      } catch (err) {
        if (!(err instanceof GatewayError && err.code === 'CHANNEL_NOT_FOUND')) throw err;
        await this.deps.channels.remove(session, row.jid);
      }
    }
    return { items, total: await this.deps.channels.count(session) };
  }

  async get(session: string, channelId: string): Promise<ChannelView> {
    const channel = await (await this.engine(session)).getChannel(channelJid(channelId));
    await this.remember(session, channel);
    return channelView(channel);
  }

  async delete(session: string, channelId: string): Promise<void> {
    const id = channelJid(channelId);
    const engine = await this.engine(session);
    const channel = await engine.getChannel(id);
    if (channel.role !== 'owner') throw new GatewayError('NOT_CHANNEL_OWNER', `only the owner of ${id} can delete it`);
    await engine.deleteChannel(id);
    await this.deps.channels.remove(session, id);
  }

  async follow(session: string, channelId: string, follow: boolean): Promise<void> {
    const id = channelJid(channelId);
    const engine = await this.engine(session);
    if (follow) await engine.followChannel(id);
    else await engine.unfollowChannel(id);
    await this.remember(session, await engine.getChannel(id));
  }

  async mute(session: string, channelId: string, muted: boolean): Promise<void> {
    const id = channelJid(channelId);
    const engine = await this.engine(session);
    if (muted) await engine.muteChannel(id);
    else await engine.unmuteChannel(id);
    await this.remember(session, await engine.getChannel(id));
  }

  private async engine(session: string): Promise<EngineSession> {
    return await this.deps.sessions.connected(session);
  }

  /** Keeps the store's list in step with what the network just said. */
  private async remember(session: string, channel: ChannelInfo): Promise<void> {
    if (channel.role === 'guest') {
      await this.deps.channels.remove(session, channel.id);
      return;
    }
    this.deps.channels.put(session, channel.id, channel.role, channel.name);
    this.deps.channels.setMuted(session, channel.id, channel.muted);
  }
}

export function channelView(channel: ChannelInfo): ChannelView {
  return {
    channelId: channel.id,
    lid: channel.id,
    name: channel.name,
    description: channel.description,
    profileUrl: channel.pictureUrl ?? null,
    followers: channel.followers,
    muted: channel.muted,
    preview: channel.role === 'guest',
    role: channel.role,
  };
}
