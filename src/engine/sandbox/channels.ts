// Channels (newsletters) on the sandbox network: an owner, followers, per-follower mute, and newsletter.update events.
import { randomInt } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { ChannelInfo, ChatOps, ImageInput } from '../types.js';
import { deliverTo, nowSeconds, type SandboxChannel } from './accounts.js';
import type { SandboxNetwork } from './network.js';

export type ChannelOpName = 'createChannel' | 'getChannel' | 'deleteChannel' | 'followChannel' | 'unfollowChannel' | 'muteChannel' | 'unmuteChannel';

/** The channel operations of one account. */
export class SandboxChannels implements Pick<ChatOps, ChannelOpName> {
  constructor(
    private readonly network: SandboxNetwork,
    private readonly me: string,
  ) {}

  async createChannel(input: { name: string; description?: string; picture?: ImageInput }): Promise<ChannelInfo> {
    let id: string;
    do id = `120363${randomInt(100_000_000_000, 999_999_999_999)}@newsletter`;
    while (this.network.channels.has(id));
    const channel: SandboxChannel = {
      id,
      name: input.name,
      description: input.description ?? '',
      ...(input.picture ? { pictureUrl: pictureUrlOf(id, input.picture) } : {}),
      ownerDigits: this.me,
      followers: new Set(),
      muted: new Set(),
      createdAt: nowSeconds(),
    };
    this.network.channels.set(id, channel);
    this.tell('newsletter.update', { id, action: 'created', name: channel.name });
    return this.view(channel);
  }

  async getChannel(channelId: string): Promise<ChannelInfo> {
    return this.view(this.channel(channelId));
  }

  async deleteChannel(channelId: string): Promise<void> {
    const channel = this.channel(channelId);
    if (channel.ownerDigits !== this.me) throw new GatewayError('NOT_CHANNEL_OWNER', `only the owner of ${channelId} can delete it`);
    this.network.channels.delete(channel.id);
    deliverTo(this.network, [channel.ownerDigits, ...channel.followers], 'newsletter.update', { id: channel.id, action: 'deleted' });
  }

  async followChannel(channelId: string): Promise<void> {
    const channel = this.channel(channelId);
    if (channel.ownerDigits === this.me || channel.followers.has(this.me)) return;
    channel.followers.add(this.me);
    this.tell('newsletter.update', { id: channel.id, action: 'followed', name: channel.name });
  }

  async unfollowChannel(channelId: string): Promise<void> {
    const channel = this.channel(channelId);
    if (channel.ownerDigits === this.me) {
      throw new GatewayError('VALIDATION_FAILED', 'the owner cannot unfollow its own channel; delete it instead', [{ path: '/channelId', message: 'is owned by this session' }]);
    }
    if (!channel.followers.delete(this.me)) return;
    channel.muted.delete(this.me);
    this.tell('newsletter.update', { id: channel.id, action: 'unfollowed' });
  }

  async muteChannel(channelId: string): Promise<void> {
    this.setMuted(channelId, true);
  }

  async unmuteChannel(channelId: string): Promise<void> {
    this.setMuted(channelId, false);
  }

  // ---- internals ----

  private setMuted(channelId: string, muted: boolean): void {
    const channel = this.channel(channelId);
    if (channel.ownerDigits !== this.me && !channel.followers.has(this.me)) {
      throw new GatewayError('VALIDATION_FAILED', `follow ${channelId} before ${muted ? 'muting' : 'unmuting'} it`, [{ path: '/channelId', message: 'is not followed by this session' }]);
    }
    if (channel.muted.has(this.me) === muted) return;
    if (muted) channel.muted.add(this.me);
    else channel.muted.delete(this.me);
    this.tell('newsletter.update', { id: channel.id, action: muted ? 'muted' : 'unmuted' });
  }

  private channel(channelId: string): SandboxChannel {
    const channel = this.network.channels.get(channelId);
    if (!channel) throw new GatewayError('CHANNEL_NOT_FOUND', `channel ${channelId} not found`);
    return channel;
  }

  private view(channel: SandboxChannel): ChannelInfo {
    return {
      id: channel.id,
      name: channel.name,
      description: channel.description,
      ...(channel.pictureUrl ? { pictureUrl: channel.pictureUrl } : {}),
      followers: channel.followers.size,
      role: channel.ownerDigits === this.me ? 'owner' : channel.followers.has(this.me) ? 'follower' : 'guest',
      muted: channel.muted.has(this.me),
    };
  }

  private tell(type: 'newsletter.update', payload: Record<string, unknown>): void {
    deliverTo(this.network, [this.me], type, payload);
  }
}

/** The network serves uploaded pictures from its CDN; the sandbox keeps the source URL, or names the upload. */
function pictureUrlOf(id: string, picture: ImageInput): string {
  return picture.sourceUrl ?? `https://sandbox.invalid/pictures/${id.split('@')[0]}.jpg`;
}
