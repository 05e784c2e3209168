// Profile and group pictures (`w:profile:picture`): set and remove (the account's own, or a group's by an admin), and
// get, which answers a URL on the media host where the stored JPEG is served.
import { getBinaryNodeChild, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import type { Groups } from './groups.js';
import type { Hub } from './hub.js';
import type { MediaStore } from './media-store.js';

export interface StoredPicture {
  id: string;
  bytes: Buffer;
  path: string;
}

export class Pictures {
  /** by the user part of the account's phone JID or of the group JID */
  private readonly byTarget = new Map<string, StoredPicture>();
  private nextId = 1;

  constructor(
    private readonly hub: Hub,
    private readonly groups: Groups,
    private readonly media: MediaStore,
  ) {}

  /** What is stored for a phone number, a user JID or a group JID. */
  picture(target: string): StoredPicture | undefined {
    return this.byTarget.get(this.key(target));
  }

  handleIq(connection: Connection, request: BinaryNode): void {
    const device = connection.device;
    if (!device) return this.hub.error(connection, request, 401, 'not-authorized');
    const target = request.attrs.target;
    if (request.attrs.type === 'get') {
      const stored = target ? this.picture(target) : undefined;
      if (!stored) return this.hub.error(connection, request, 404, 'item-not-found');
      const type = getBinaryNodeChild(request, 'picture')?.attrs.type ?? 'image';
      return this.hub.result(connection, request, [{ tag: 'picture', attrs: { id: stored.id, type, url: `https://${this.media.host}${stored.path}` } }]);
    }
    // set, or remove when there is no picture child: the account's own, or a group's (admins only)
    let key = this.key(device.account.pnJid);
    if (target) {
      const group = jidDecode(target)?.server === 'g.us' ? this.groups.get(target) : undefined;
      if (!group) return this.hub.error(connection, request, 404, 'item-not-found');
      const role = group.participants.get(device.account);
      if (role === undefined) return this.hub.error(connection, request, 403, 'forbidden');
      if (role === null) return this.hub.error(connection, request, 401, 'not-authorized');
      key = this.key(target);
    }
    const old = this.byTarget.get(key);
    if (old) this.media.blobs.delete(old.path);
    const content = getBinaryNodeChild(request, 'picture')?.content;
    if (content instanceof Uint8Array && content.length) {
      const id = String(this.nextId++);
      const path = `/pp/${key}/${id}.jpg`;
      const bytes = Buffer.from(content);
      this.media.blobs.set(path, { path, bytes, uploadedAt: Date.now() });
      this.byTarget.set(key, { id, bytes, path });
      this.hub.log('picture set', { target: key, bytes: bytes.length });
      return this.hub.result(connection, request, [{ tag: 'picture', attrs: { id } }]);
    }
    this.byTarget.delete(key);
    this.hub.log('picture removed', { target: key });
    this.hub.result(connection, request);
  }

  private key(target: string): string {
    const decoded = target.includes('@') ? jidDecode(target) : undefined;
    if (!decoded) return target.replace(/^\+/, '');
    if (decoded.server === 'lid') return this.hub.registry.account(target)?.phone ?? decoded.user;
    return decoded.user;
  }
}
