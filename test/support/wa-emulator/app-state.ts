// App-state sync (`w:sync:app:state`): each account keeps a version and its patches per collection, as WhatsApp's server
// does. A resync from version v gets the patches after v; a patch made on the server's version is kept and answered with
// the collection's new version (Baileys' appPatch then stores its state); a patch on an older version is a 409 conflict,
// as on the real server (a client resyncs before it patches, so it meets one only when another device patched in
// between). The emulator reads every patch with the account's app-state key, so tests can see what reached the server.
import { decodeSyncdMutations, getBinaryNodeChild, getBinaryNodeChildren, newLTHashState, proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import type { Hub } from './hub.js';
import type { Account } from './registry.js';

/** One mutation of a patch a device sent, read with the account's key. */
export interface AppStatePatchRecord {
  /** the account's phone digits */
  phone: string;
  /** the companion that sent it */
  device: string;
  /** `regular_low`, `regular_high`, `regular`, `critical_block`, `critical_unblock_low` */
  collection: string;
  /** the collection's version the patch made */
  version: number;
  operation: 'set' | 'remove';
  /** the action index, e.g. `['archive', '1555…@s.whatsapp.net']`, `['pin_v1', …]`, `['mute', …]`, `['markChatAsRead', …]` */
  index: string[];
  /** the SyncActionValue, as JSON (e.g. `{ archiveChatAction: { archived: true, … }, timestamp: … }`) */
  value: Record<string, unknown>;
  at: number;
}

interface Collection {
  version: number;
  /** encoded SyncdPatch by the version it made (version n at index n - 1) */
  patches: Uint8Array[];
}

/** patches a resync answer carries at most (the rest: has_more_patches) */
const PATCHES_PER_ANSWER = 50;

export class AppState {
  private readonly collections = new Map<string, Map<string, Collection>>();
  private readonly records: AppStatePatchRecord[] = [];

  constructor(private readonly hub: Hub) {}

  /** What devices of `phone` (all accounts when absent) patched, oldest first. */
  patches(phone?: string): AppStatePatchRecord[] {
    return this.records.filter((r) => phone === undefined || r.phone === phone).map((r) => ({ ...r, index: [...r.index] }));
  }

  async handleIq(connection: Connection, request: BinaryNode, child: BinaryNode | undefined): Promise<void> {
    const account = connection.device?.account;
    if (!account) return this.hub.error(connection, request, 401, 'not-authorized');
    const answers: BinaryNode[] = [];
    for (const node of getBinaryNodeChildren(child, 'collection')) {
      const name = node.attrs.name ?? '';
      const collection = this.collection(account, name);
      const from = Number(node.attrs.version ?? '0') || 0;
      const patch = getBinaryNodeChild(node, 'patch');
      if (patch) {
        // a patch: it must build on the server's version
        if (from !== collection.version) return this.hub.error(connection, request, 409, 'conflict');
        const bytes = patch.content instanceof Uint8Array ? patch.content : new Uint8Array();
        const decoded = proto.SyncdPatch.decode(bytes);
        collection.version += 1;
        decoded.version = { version: collection.version };
        collection.patches.push(proto.SyncdPatch.encode(decoded).finish());
        await this.record(account, connection.device!.jid, name, collection.version, decoded);
        answers.push({ tag: 'collection', attrs: { name, version: String(collection.version) } });
        continue;
      }
      // a resync: the patches after the client's version
      const newer = collection.patches.slice(Math.min(from, collection.patches.length), Math.min(from, collection.patches.length) + PATCHES_PER_ANSWER);
      const more = from + newer.length < collection.version;
      answers.push({
        tag: 'collection',
        attrs: { name, version: String(from + newer.length), has_more_patches: String(more) },
        ...(newer.length ? { content: [{ tag: 'patches', attrs: {}, content: newer.map((p) => ({ tag: 'patch', attrs: {}, content: p })) }] } : {}),
      });
    }
    this.hub.result(connection, request, [{ tag: 'sync', attrs: {}, content: answers }]);
  }

  private collection(account: Account, name: string): Collection {
    let byName = this.collections.get(account.phone);
    if (!byName) this.collections.set(account.phone, (byName = new Map()));
    let collection = byName.get(name);
    if (!collection) byName.set(name, (collection = { version: 0, patches: [] }));
    return collection;
  }

  /** Reads the patch's mutations with the account's key (the MACs are not checked: the record is what was sent). */
  private async record(account: Account, device: string, collection: string, version: number, patch: proto.ISyncdPatch): Promise<void> {
    const key = account.appStateKey;
    const keyId = key.keyId.toString('base64');
    const getKey = async (id: string) => (id === keyId ? { keyData: key.keyData, fingerprint: {}, timestamp: key.timestamp } : undefined) as never;
    for (const mutation of patch.mutations ?? []) {
      const operation = mutation.operation === proto.SyncdMutation.SyncdOperation.REMOVE ? 'remove' : 'set';
      try {
        await decodeSyncdMutations(
          [mutation as proto.SyncdMutation],
          newLTHashState(),
          getKey,
          ({ syncAction, index }) => {
            this.records.push({
              phone: account.phone,
              device,
              collection,
              version,
              operation,
              index: index as string[],
              value: proto.SyncActionValue.toObject(syncAction.value as proto.SyncActionValue, { longs: Number }) as Record<string, unknown>,
              at: Date.now(),
            });
          },
          false,
        );
      } catch (error) {
        this.hub.log('app-state mutation not readable with the account key', { phone: account.phone, collection, error: String(error) });
      }
    }
  }
}
