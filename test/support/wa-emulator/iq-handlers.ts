// Answers client iqs: login-blocking queries, prekeys, usync, privacy, blocklist, media_conn, app state (patches kept), groups; unknown → empty result.
import { getBinaryNodeChild, getBinaryNodeChildren, S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import type { Connection } from './connection.js';
import { readUintBE } from './crypto.js';
import type { Groups } from './groups.js';
import type { Hub } from './hub.js';
import type { MediaStore } from './media-store.js';
import type { Pairing } from './pairing.js';
import type { Pictures } from './pictures.js';
import type { AppState } from './app-state.js';
import { profile } from './profile.js';
import { usyncResult } from './usync.js';

export interface IqContext {
  hub: Hub;
  pairing: Pairing;
  groups: Groups;
  media: MediaStore;
  pictures: Pictures;
  appState: AppState;
}

type IqHandler = (ctx: IqContext, connection: Connection, request: BinaryNode, child: BinaryNode | undefined) => void;

const bytes = (node: BinaryNode | undefined): Buffer => Buffer.from(node?.content instanceof Uint8Array ? node.content : []);

const handlers: Record<string, IqHandler> = {
  'w:p': ({ hub }, c, req) => hub.result(c, req),

  md: ({ hub, pairing }, c, req, child) => {
    if (child?.tag === 'link_code_companion_reg') return pairing.handleLinkCode(c, req, child);
    if (child?.tag === 'remove-companion-device') return pairing.logout(c, req, child);
    hub.result(c, req);
  },

  passive: ({ hub }, c, req, child) => {
    hub.result(c, req);
    if (child?.tag === 'active' && c.device && profile.offlineMarkerAfterActive) {
      const count = hub.flushOffline(c, c.device);
      if (count) hub.log('delivered offline queue', { device: c.device.jid, count });
    }
  },

  encrypt: ({ hub }, c, req, child) => {
    const device = c.device;
    if (!device) return hub.result(c, req);
    if (child?.tag === 'count') return hub.result(c, req, [{ tag: 'count', attrs: { value: String(device.preKeys.size) } }]);
    if (child?.tag === 'digest') {
      hub.result(c, req, [{ tag: 'digest', attrs: {} }]);
      // the key-bundle digest is the last query of Baileys' login (CB:success), answered before it reports `open`
      return hub.silenceIfDue(c, device);
    }
    if (child?.tag === 'key') {
      const users = getBinaryNodeChildren(child, 'user').map((u) => hub.registry.keyBundleNode(u.attrs.jid ?? ''));
      return hub.result(c, req, [{ tag: 'list', attrs: {}, content: users }]);
    }
    if (child?.tag === 'rotate') {
      const skey = getBinaryNodeChild(child, 'skey');
      if (skey) {
        device.signedPreKey = {
          keyId: readUintBE(bytes(getBinaryNodeChild(skey, 'id'))),
          publicKey: bytes(getBinaryNodeChild(skey, 'value')),
          signature: bytes(getBinaryNodeChild(skey, 'signature')),
        };
      }
      return hub.result(c, req);
    }
    if (req.attrs.type === 'set' && getBinaryNodeChild(req, 'list')) {
      for (const key of getBinaryNodeChildren(getBinaryNodeChild(req, 'list'), 'key')) {
        device.preKeys.set(readUintBE(bytes(getBinaryNodeChild(key, 'id'))), bytes(getBinaryNodeChild(key, 'value')));
      }
      const skey = getBinaryNodeChild(req, 'skey');
      if (skey) {
        device.signedPreKey = {
          keyId: readUintBE(bytes(getBinaryNodeChild(skey, 'id'))),
          publicKey: bytes(getBinaryNodeChild(skey, 'value')),
          signature: bytes(getBinaryNodeChild(skey, 'signature')),
        };
      }
      const registration = getBinaryNodeChild(req, 'registration');
      if (registration) device.registrationId = readUintBE(bytes(registration));
      return hub.result(c, req);
    }
    hub.result(c, req);
  },

  usync: ({ hub }, c, req, child) => hub.result(c, req, child ? [usyncResult(hub.registry, child)] : undefined),

  abt: ({ hub }, c, req) => hub.result(c, req, [{ tag: 'props', attrs: { protocol: '1', hash: 'emulator' } }]),
  w: ({ hub }, c, req) => hub.result(c, req, [{ tag: 'props', attrs: { protocol: '2', hash: 'emulator' } }]),

  privacy: ({ hub }, c, req, child) => {
    const account = c.device?.account;
    if (account && child?.tag === 'privacy') {
      if (req.attrs.type === 'set') {
        for (const category of getBinaryNodeChildren(child, 'category')) {
          if (category.attrs.name && category.attrs.value) account.privacy[category.attrs.name] = category.attrs.value;
        }
        return hub.result(c, req);
      }
      return hub.result(c, req, [
        { tag: 'privacy', attrs: {}, content: Object.entries(account.privacy).map(([name, value]) => ({ tag: 'category', attrs: { name, value } })) },
      ]);
    }
    hub.result(c, req); // tokens etc.
  },

  blocklist: ({ hub }, c, req) => {
    const account = c.device?.account;
    if (!account) return hub.result(c, req);
    if (req.attrs.type === 'set') {
      for (const item of getBinaryNodeChildren(req, 'item')) {
        const target = hub.registry.account(item.attrs.jid ?? '');
        if (!target) continue;
        if (item.attrs.action === 'block') account.blocklist.add(target.pnJid);
        else account.blocklist.delete(target.pnJid);
      }
      return hub.result(c, req);
    }
    hub.result(c, req, [{ tag: 'list', attrs: {}, content: [...account.blocklist].map((jid) => ({ tag: 'item', attrs: { jid } })) }]);
  },

  status: ({ hub }, c, req, child) => {
    if (c.device && child?.tag === 'status' && req.attrs.type === 'set') c.device.account.about = bytes(child).toString('utf8');
    hub.result(c, req);
  },

  'w:m': ({ hub, media }, c, req, child) => {
    if (child?.tag !== 'media_conn') return hub.result(c, req);
    hub.result(c, req, [
      { tag: 'media_conn', attrs: { auth: 'emulator-auth', ttl: '3600', auth_ttl: '3600' }, content: [{ tag: 'host', attrs: { hostname: media.host, maxContentLengthBytes: '104857600' } }] },
    ]);
  },

  'w:profile:picture': ({ pictures }, c, req) => pictures.handleIq(c, req),

  // patches kept per account and collection (app-state.ts); no snapshots: Baileys' resync loop ends once every
  // collection it asked for is answered without has_more_patches
  'w:sync:app:state': ({ appState, hub }, c, req, child) => {
    appState.handleIq(c, req, child).catch((error: unknown) => {
      hub.log('app-state iq failed', { error: String(error) });
      hub.error(c, req, 500, 'internal-server-error');
    });
  },

  'w:g2': ({ groups }, c, req, child) => groups.handleIq(c, req, child),
};

export function handleIq(ctx: IqContext, connection: Connection, request: BinaryNode): void {
  const child = Array.isArray(request.content) ? request.content[0] : undefined;
  const handler = handlers[request.attrs.xmlns ?? ''];
  if (handler) return handler(ctx, connection, request, child);
  ctx.hub.log('unknown iq; empty result', { xmlns: request.attrs.xmlns, type: request.attrs.type, child: child?.tag, to: request.attrs.to ?? S_WHATSAPP_NET });
  ctx.hub.result(connection, request);
}
